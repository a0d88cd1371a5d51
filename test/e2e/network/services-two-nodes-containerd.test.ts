/**
 * Services that route (issue 24, its "Tests" section) end to end on real containerd and runc:
 * two svc-node processes, each with its own containerd, in two network namespaces joined by a
 * bridge (test/helpers/netns-cluster.ts), under their own node certificates (Node authorizer and
 * the nodes' grants, as real nodes), one svc-apiserver with --cluster-cidr. Each agent runs the
 * pod network, the network proxy (nftables), NetworkPolicy enforcement and the node-local cluster
 * DNS server on 169.254.20.10 (on the namespace's lo: the kernel here has no dummy driver), so a
 * busybox pod on node A fetches `http://web.default.svc.cluster.local` from a busybox httpd pod
 * on node B by name: its resolv.conf (from clusterDNS and clusterDomain) points at node A's DNS
 * server, the name resolves to the Service's cluster IP, node A's proxy rules send the connection
 * to the pod, the host-gateway route carries it to node B. Then: nslookup in the pod; a pod next
 * to the backend (bridged: the agent turns br_netfilter's setting on) and the node itself; the
 * NodePort on both nodes' addresses; client addresses under both external traffic policies; an
 * agent crash-restart; scaling the backend (with ClientIP affinity and internalTrafficPolicy
 * Local on the way); a NetworkPolicy blocking, then allowing; no backend left (rejected); clean
 * agent stops leaving no table, address or error behind.
 *
 * SRV and PTR answers are the DNS server's (agent/dns) and are checked with dig in
 * test/e2e/dns/cluster-dns.test.ts; here the name is asked from inside a pod. Traffic stays in the
 * test's namespaces and the host end of their bridge. Every wait is for a condition, bounded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { systemTool } from '../../../agent/proxy/nft-exec';
import { BUSYBOX_IMAGE } from '../../helpers/containerd';
import { startNetnsCluster, type NetnsCluster, type NetnsNode } from '../../helpers/netns-cluster';
import { eventually, kubectlJson, kubectlStdin } from '../agent/agent-process';

const NFT = systemTool('nft'); // not PATH's: npm puts an unrelated `nft` first
const CLUSTER_CIDR = '10.244.0.0/16';
const SERVICE_CIDR = '10.96.0.0/16';
const DNS_IP = '169.254.20.10';
const URL = 'http://web.default.svc.cluster.local/';
/** The agent's log components of this loops. */
const NETWORK_COMPONENTS = ['proxy', 'netpol', 'cluster-dns', 'pod-network'];
/** How long a change may take to show (generous: a shared, loaded machine). */
const BOUND_MS = 60_000;

interface PodJson {
  status: { phase?: string; podIP?: string; containerStatuses?: { containerID?: string; ready?: boolean }[] };
}
interface ServiceJson {
  spec: { clusterIP: string; ports: { nodePort: number }[] };
}

let cluster: NetnsCluster | undefined;
let resolvDir: string | undefined;
/** One CRI client per node (its containerd), closed before the agents stop. */
const cris = new Map<string, GrpcRuntimeService>();
let client: { ip: string; container: string };
/** A client pod on node B, the backends' node. */
let clientB: { ip: string; container: string };
let web1: { ip: string; container: string };
let svc: ServiceJson;
const c = (): NetnsCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};
const nodes = (): [NetnsNode, NetnsNode] => c().nodes as [NetnsNode, NetnsNode];

test.before(async () => {
  // The agents' resolvConf: names outside the cluster go to a resolver nobody runs in the
  // namespaces (refused at once), never to the machine's own resolvers; no host search paths.
  resolvDir = mkdtempSync(path.join(tmpdir(), 'svc-e2e-resolv-'));
  const resolvConf = path.join(resolvDir, 'resolv.conf');
  writeFileSync(resolvConf, 'nameserver 127.0.0.1\n');
  cluster = await startNetnsCluster({
    apiArgs: [`--cluster-cidr=${CLUSTER_CIDR}`, `--service-cluster-ip-range=${SERVICE_CIDR}`],
    // As real nodes: the proxy, DNS, policy and route loops read the API under the node's own rights.
    nodeIdentity: true,
    configLines: [
      'clusterDomain: cluster.local',
      `clusterDNS: ["${DNS_IP}"]`,
      `resolvConf: ${resolvConf}`,
      'dns:',
      '  enabled: true',
      '  interfaceName: lo',
      'proxy:',
      '  mode: nftables',
      `  clusterCIDR: ${CLUSTER_CIDR}`,
      'networkPolicy:',
      '  mode: nftables',
    ],
  });
});

test.after.always(async () => {
  for (const cri of cris.values()) cri.close();
  await cluster?.stop();
  if (resolvDir) rmSync(resolvDir, { recursive: true, force: true });
});

const create = (obj: object) => kubectlStdin(c().kubeconfig, ['create', '-f', '-'], JSON.stringify(obj));

function pod(name: string, node: string, labels: Record<string, string>, command: string[]): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command, ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }] }],
    },
  };
}

/** The address busybox httpd's CGI saw ("[::ffff:10.1.2.3]" on its IPv6 socket) as plain IPv4. */
const clientAddr = (page: string | undefined) => page?.trim().replace(/^\[::ffff:(.*)\]$/, '$1');

/** busybox httpd serving "hello from <name>" at / and the client's address (CGI REMOTE_ADDR) at /cgi-bin/ip. */
const httpd = (name: string) => [
  'sh',
  '-c',
  `mkdir -p /www/cgi-bin && echo "hello from ${name}" > /www/index.html && printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\necho $REMOTE_ADDR\\n' > /www/cgi-bin/ip && chmod +x /www/cgi-bin/ip && exec httpd -f -p 80 -h /www`,
];

async function ready(name: string): Promise<{ ip: string; container: string }> {
  return eventually(`${name} running and ready with an IP`, async () => {
    const p = await kubectlJson<PodJson>(c().kubeconfig, ['get', 'pod', name]);
    const st = p.status.containerStatuses?.[0];
    const id = st?.containerID ?? '';
    return p.status.phase === 'Running' && st?.ready && p.status.podIP && id.startsWith('containerd://') ? { ip: p.status.podIP, container: id.slice('containerd://'.length) } : undefined;
  }, 90_000, 300);
}

/** Runs a command in a container of the node's containerd; resolves exit code and output. */
async function podExec(node: NetnsNode, container: string, argv: string[]): Promise<{ code: number; out: string }> {
  let cri = cris.get(node.name);
  if (!cri) {
    cri = new GrpcRuntimeService(node.ctrd.endpoint, node.ctrd.endpoint, { timeoutMs: 30_000 });
    cris.set(node.name, cri);
  }
  const r = await cri.execSync(container, argv, 15);
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

/** One fetch of the Service by name from a pod; the page, or undefined when it failed. `timeout`: busybox wget's -T crashes (see the podnet e2e). */
async function fetchFrom(node: NetnsNode, container: string, page = ''): Promise<string | undefined> {
  const r = await podExec(node, container, ['timeout', '5', 'wget', '-qO-', URL + page]);
  return r.code === 0 ? r.out : undefined;
}
/** From the client pod on node A. */
const fetchFromClient = () => fetchFrom(nodes()[0], client.container);

/** The host end fetches a node address's port (the NodePort); the body, or undefined. */
function hostGet(ip: string, port: number, page = '/'): Promise<string | undefined> {
  return new Promise((resolve) => {
    // insecureHTTPParser: the CGI script's header lines end in a bare LF (busybox httpd passes them on).
    const req = request({ host: ip, port, path: page, timeout: 5000, agent: false, insecureHTTPParser: true }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

const proxyTable = (n: NetnsNode) => n.exec(NFT, 'list', 'table', 'ip', 'svc-proxy').catch(() => '');
const netpolTable = (n: NetnsNode) => n.exec(NFT, 'list', 'table', 'inet', 'svc-netpol').catch(() => '');

/** Waits until `probe` answers true (real time, bounded); fails naming what never happened, with `detail` (e.g. the rules as they are). */
async function until(what: string, probe: () => Promise<boolean>, detail: () => Promise<string> = () => Promise.resolve(''), boundMs = BOUND_MS): Promise<void> {
  await eventually(what, async () => ((await probe()) ? true : undefined), boundMs, 300).catch(async (e: Error) => {
    throw new Error(`not within ${boundMs} ms: ${what} (${e.message})\n${await detail().catch((x: Error) => x.message)}`);
  });
}

/** The node's agent log lines of one component (for failure messages). */
const agentLog = (n: NetnsNode, component: string) => (): Promise<string> =>
  Promise.resolve( n.agent.logs.filter((l) => l['component'] === component).map((l) => JSON.stringify(l)).slice(-20).join('\n'));

test.serial('a pod on node A fetches http://web.default.svc.cluster.local from an httpd pod on node B: its resolv.conf, the node-local DNS, the proxy, the route', async (t) => {
  const [a, b] = nodes();
  await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } });
  await create(pod('web-1', b.name, { app: 'web' }, httpd('web-1')));
  await create(pod('client', a.name, { role: 'client' }, ['sleep', '3600']));
  await create(pod('client-b', b.name, { role: 'client' }, ['sleep', '3600']));
  web1 = await ready('web-1');
  client = await ready('client');
  clientB = await ready('client-b');
  svc = await kubectlJson<ServiceJson>(c().kubeconfig, ['get', 'service', 'web']);

  const resolv = (await podExec(a, client.container, ['cat', '/etc/resolv.conf'])).out;
  t.regex(resolv, new RegExp(`^nameserver ${DNS_IP.replace(/\./g, '\\.')}$`, 'm'), resolv);
  t.regex(resolv, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local\s*$/m, resolv);
  t.regex(resolv, /^options ndots:5$/m, resolv);

  await until(`node A's proxy rules send ${svc.spec.clusterIP} to web-1 (${web1.ip})`, async () => (await proxyTable(a)).includes(`dnat to ${web1.ip}:80`), agentLog(a, 'proxy'));
  const page = await eventually('the page through the Service by name', fetchFromClient, BOUND_MS, 300);
  t.is(page, 'hello from web-1\n');
});

test.serial('nslookup in the client pod resolves the Service name to its cluster IP through the node-local DNS server', async (t) => {
  const [a] = nodes();
  const look = await podExec(a, client.container, ['nslookup', 'web.default.svc.cluster.local']);
  t.is(look.code, 0, look.out);
  t.regex(look.out, new RegExp(`Server:\\s+${DNS_IP.replace(/\./g, '\\.')}`), look.out);
  t.regex(look.out, new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}`), look.out);
  // A short name through the search path (ndots:5), as pods usually spell it.
  const short = await podExec(a, client.container, ['nslookup', 'web']);
  t.regex(short.out, new RegExp(`Address:\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}`), short.out);
  const missing = await podExec(a, client.container, ['nslookup', 'nothere.default.svc.cluster.local']);
  t.not(missing.code, 0, missing.out);
  t.regex(missing.out, /NXDOMAIN/, missing.out);
});

test.serial("the Service answers a pod on the backend's own node (bridged to it: the agent turns br_netfilter's setting on) and node A's own namespace (host network)", async (t) => {
  const [a, b] = nodes();
  // A node where nothing turned bridged traffic through the IP hooks on (br_netfilter loaded
  // by nobody, as on a fresh host): the agent, with the proxy on, turns it on at start.
  await b.exec('sysctl', '-qw', 'net.bridge.bridge-nf-call-iptables=0');
  await b.restartAgent();
  t.is((await b.exec('sysctl', '-n', 'net.bridge.bridge-nf-call-iptables')).trim(), '1', 'svc-node turned net.bridge.bridge-nf-call-iptables on');
  t.is(await eventually('the page from client-b on node B', () => fetchFrom(b, clientB.container), BOUND_MS, 300), 'hello from web-1\n');
  // A node's own connections to a cluster IP need a route for it before the proxy's output rule
  // rewrites them (a real node's default route; these namespaces have none: nothing may leave).
  await a.exec('ip', 'route', 'replace', SERVICE_CIDR, 'dev', 'eth0');
  const fromNode = () => a.exec('/bin/busybox', 'timeout', '5', 'wget', '-qO-', `http://${svc.spec.clusterIP}/`).catch(() => undefined);
  t.is(await eventually("the page from node A's namespace by cluster IP", fromNode, BOUND_MS, 300), 'hello from web-1\n');
});

test.serial("the NodePort answers on both nodes' addresses (node A has no backend: it forwards to node B)", async (t) => {
  const nodePort = svc.spec.ports[0].nodePort;
  t.true(nodePort >= 30000 && nodePort <= 32767, `node port ${nodePort}`);
  for (const n of nodes()) {
    t.is(await eventually(`the NodePort on ${n.name} (${n.ip}:${nodePort})`, () => hostGet(n.ip, nodePort), BOUND_MS, 300), 'hello from web-1\n');
  }
});

test.serial('client addresses: a pod keeps its own; the NodePort masquerades under externalTrafficPolicy Cluster, keeps the client under Local, where a node without endpoints drops', async (t) => {
  const [a, b] = nodes();
  const cl = c();
  const nodePort = svc.spec.ports[0].nodePort;
  t.is(clientAddr(await fetchFrom(a, client.container, 'cgi-bin/ip')), client.ip, 'pod to Service inside the cluster CIDR: not masqueraded');
  t.is(clientAddr(await hostGet(a.ip, nodePort, '/cgi-bin/ip')), a.ip, "through node A to node B's pod: masqueraded to node A's address");
  const viaB = clientAddr(await hostGet(b.ip, nodePort, '/cgi-bin/ip'));
  t.truthy(viaB);
  t.not(viaB, cl.hostIp, 'Cluster policy: masqueraded on node B too');

  const policy = (p: string) => kubectlStdin(cl.kubeconfig, ['patch', 'service', 'web', '--type=merge', '-p', JSON.stringify({ spec: { externalTrafficPolicy: p } })], '');
  await policy('Local');
  await until(`node B's NodePort keeps the client address ${cl.hostIp}`, async () => clientAddr(await hostGet(b.ip, nodePort, '/cgi-bin/ip')) === cl.hostIp, () => proxyTable(b));
  await until('node A (no local endpoint) drops its NodePort', async () => (await hostGet(a.ip, nodePort)) === undefined, () => proxyTable(a));
  t.is(await fetchFromClient(), 'hello from web-1\n', 'the cluster IP is not affected by the external policy');
  await policy('Cluster');
  t.is(await eventually('node A forwards its NodePort again', () => hostGet(a.ip, nodePort), BOUND_MS, 300), 'hello from web-1\n');
});

test.serial('a crashed agent (SIGKILL) restarted replaces its rules and serves DNS again; the Service still answers by name', async (t) => {
  const [a] = nodes();
  await a.restartAgent();
  t.is(await eventually('the page by name after the restart', fetchFromClient, BOUND_MS, 300), 'hello from web-1\n');
  const table = await proxyTable(a);
  t.is(table.split(`dnat to ${web1.ip}:80`).length - 1, 1, table);
  const look = await podExec(a, client.container, ['nslookup', 'web.default.svc.cluster.local']);
  t.regex(look.out, new RegExp(`Address:\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}`), look.out);
});

test.serial('scaling the backend updates the rules: a second pod is added to them and answers (with ClientIP affinity each client sticks to one; internalTrafficPolicy Local keeps to the node); a deleted one is taken out', async (t) => {
  const [a, b] = nodes();
  await create(pod('web-2', b.name, { app: 'web' }, httpd('web-2')));
  const web2 = await ready('web-2');
  await until(`node A's proxy rules include web-2 (${web2.ip})`, async () => (await proxyTable(a)).includes(`dnat to ${web2.ip}:80`), agentLog(a, 'proxy'));
  // Random endpoint choice: both pods answer within a bounded number of fetches.
  const seen = new Set<string>();
  for (let i = 0; i < 60 && seen.size < 2; i++) {
    const page = await fetchFromClient();
    if (page) seen.add(page.trim());
  }
  t.deepEqual([...seen].sort(), ['hello from web-1', 'hello from web-2']);

  // sessionAffinity ClientIP: the kernel's dynamic affinity sets keep each client on one pod.
  const patch = (spec: object) => kubectlStdin(c().kubeconfig, ['patch', 'service', 'web', '--type=merge', '-p', JSON.stringify({ spec })], '');
  await patch({ sessionAffinity: 'ClientIP' });
  await until("node A's rules check the affinity sets", async () => /saddr @affinity-/.test(await proxyTable(a)), () => proxyTable(a));
  const first = await eventually('a fetch under affinity', fetchFromClient, BOUND_MS, 300);
  for (let i = 0; i < 10; i++) t.is(await fetchFromClient(), first, `fetch ${i} sticks to the first pod`);
  await patch({ sessionAffinity: 'None' });
  await until("node A's rules without affinity", async () => !/saddr @affinity-/.test(await proxyTable(a)), () => proxyTable(a));

  // internalTrafficPolicy Local: only the node's own endpoints; node A has none (dropped).
  await patch({ internalTrafficPolicy: 'Local' });
  await until('the fetch from node A dropped under internalTrafficPolicy Local', async () => (await fetchFromClient()) === undefined, () => proxyTable(a));
  t.regex((await fetchFrom(b, clientB.container)) ?? '', /^hello from web-[12]\n$/, "node B's pod reaches its node's endpoints");
  await patch({ internalTrafficPolicy: 'Cluster' });
  t.regex(await eventually('the fetch from node A under Cluster again', fetchFromClient, BOUND_MS, 300), /^hello from web-[12]\n$/);

  await kubectlStdin(c().kubeconfig, ['delete', 'pod', 'web-1', '--wait=false'], '');
  for (const n of [a, b]) await until(`${n.name}'s proxy rules drop web-1 (${web1.ip})`, async () => !(await proxyTable(n)).includes(`dnat to ${web1.ip}:80`), agentLog(n, 'proxy'));
  for (let i = 0; i < 10; i++) t.is(await fetchFromClient(), 'hello from web-2\n', `fetch ${i} after web-1 left`);
  web1 = web2;
});

test.serial('a NetworkPolicy blocks the fetch; changed to admit the client, it allows it again; removed, traffic flows', async (t) => {
  const [, b] = nodes();
  const policy = (ingress: object[]) => JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'web-ingress', namespace: 'default' }, spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'], ingress } });
  await kubectlStdin(c().kubeconfig, ['apply', '-f', '-'], policy([]));
  await until(`node B's policy table isolates ${web1.ip}`, async () => (await netpolTable(b)).includes(`${web1.ip} : jump ingress-`), async () => `${await netpolTable(b)}\n${await agentLog(b, 'netpol')()}`);
  t.is(await fetchFromClient(), undefined, 'the fetch is blocked by the default-deny ingress policy');
  t.is(await fetchFrom(b, clientB.container), undefined, "the fetch from the backend's own node is blocked too");

  await kubectlStdin(c().kubeconfig, ['apply', '-f', '-'], policy([{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ protocol: 'TCP', port: 'http' }] }]));
  t.is(await eventually('the fetch allowed for role=client', fetchFromClient, BOUND_MS, 300), 'hello from web-2\n');
  t.is(await fetchFrom(b, clientB.container), 'hello from web-2\n', 'allowed from the backend\'s own node too');

  await kubectlStdin(c().kubeconfig, ['apply', '-f', '-'], policy([{ from: [{ podSelector: { matchLabels: { role: 'other' } } }] }]));
  await until('the fetch blocked again (only role=other admitted)', async () => (await fetchFromClient()) === undefined, async () => netpolTable(b));
  await kubectlStdin(c().kubeconfig, ['delete', 'networkpolicy', 'web-ingress'], '');
  t.is(await eventually('the fetch once the policy is gone', fetchFromClient, BOUND_MS, 300), 'hello from web-2\n');
});

test.serial("an egress NetworkPolicy on the client (enforced on node A, after the proxy's DNAT: the pod's address and named port) allows, then blocks the fetch", async (t) => {
  const [a] = nodes();
  const policy = (to: object[]) =>
    JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'client-egress', namespace: 'default' }, spec: { podSelector: { matchLabels: { role: 'client' } }, policyTypes: ['Egress'], egress: [{ to, ports: [{ protocol: 'TCP', port: 'http' }] }] } });
  await kubectlStdin(c().kubeconfig, ['apply', '-f', '-'], policy([{ podSelector: { matchLabels: { app: 'web' } } }]));
  await until(`node A's policy table isolates the client's egress (${client.ip})`, async () => (await netpolTable(a)).includes(`${client.ip} : jump egress-`), () => netpolTable(a));
  t.is(await fetchFromClient(), 'hello from web-2\n', 'egress to app=web on the named port http is allowed (the name still resolves: the node-local DNS is not forwarded traffic)');
  await kubectlStdin(c().kubeconfig, ['apply', '-f', '-'], policy([{ podSelector: { matchLabels: { app: 'other' } } }]));
  await until('the fetch blocked by the egress policy', async () => (await fetchFromClient()) === undefined, () => netpolTable(a));
  await kubectlStdin(c().kubeconfig, ['delete', 'networkpolicy', 'client-egress'], '');
  t.is(await eventually('the fetch once the egress policy is gone', fetchFromClient, BOUND_MS, 300), 'hello from web-2\n');
});

test.serial('with no backend left the Service rejects connections at once (no hanging), and its name still resolves', async (t) => {
  await kubectlStdin(c().kubeconfig, ['delete', 'pod', 'web-2', '--wait=false'], '');
  const attempt = () => podExec(nodes()[0], client.container, ['timeout', '5', 'wget', '-qO-', URL]);
  await until('the fetch refused', async () => /refused/i.test((await attempt()).out), () => proxyTable(nodes()[0]));
  t.not((await attempt()).code, 0);
  const look = await podExec(nodes()[0], client.container, ['nslookup', 'web.default.svc.cluster.local']);
  t.regex(look.out, new RegExp(`Address:\\s+${svc.spec.clusterIP.replace(/\./g, '\\.')}`), look.out);
});

test.serial("agents stopped cleanly take the proxy's and the policy's tables and the DNS address with them; nothing of the test's is left", async (t) => {
  const cl = c();
  const before = await Promise.all(cl.nodes.map((n) => n.exec(NFT, 'list', 'tables')));
  for (const tables of before) t.regex(tables, /table ip svc-proxy[\s\S]*table inet svc-netpol|table inet svc-netpol[\s\S]*table ip svc-proxy/, tables);
  // Pods go first: without the agent's CNI config the runtime cannot tear a pod's network down.
  await kubectlStdin(cl.kubeconfig, ['delete', 'pods', '--all', '--wait=true', '--timeout=60s'], '');
  for (const cri of cris.values()) cri.close();
  cris.clear();
  for (const n of cl.nodes) t.is(await n.stopAgent(), 0, `${n.name} exits cleanly`);
  for (const n of cl.nodes) {
    const tables = await n.exec(NFT, 'list', 'tables');
    t.notRegex(tables, /svc-proxy|svc-netpol/, `${n.name}: ${tables}`);
    t.notRegex(await n.exec('ip', '-o', 'addr', 'show', 'dev', 'lo'), new RegExp(DNS_IP.replace(/\./g, '\\.')), `${n.name}'s DNS address is gone`);
  }
  for (const n of cl.nodes) {
    // The network components' errors (a failed rule sync, DNS server, route): none, restarts included.
    const errors = n.agent.logs.filter((l) => NETWORK_COMPONENTS.includes(String(l['component'])) && typeof l['level'] === 'number' && l['level'] >= 50);
    t.deepEqual(errors, [], `${n.name}'s network components logged no errors`);
  }
  await cl.stop();
  t.deepEqual(await cl.leftovers(), []);
});
