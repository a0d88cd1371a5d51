/**
 * Pod networking across two nodes (issue 24 item 5) on real containerd and runc: two svc-node
 * processes, each with its own containerd, in two network namespaces joined by a bridge
 * (test/helpers/netns-cluster.ts), one svc-apiserver with --cluster-cidr. The API server gives
 * each Node a podCIDR; each agent writes its bridge CNI config into its containerd's CNI config
 * directory and routes the other node's podCIDR through the other node's address; a busybox pod
 * on node A fetches a page from a busybox httpd pod on node B by pod IP and through its hostPort;
 * routes and configs are gone once the agents stop. Traffic stays inside the test's namespaces.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { CNI_CONFIG_FILE, ROUTE_PROTO } from '../../../agent/podnet';
import { BUSYBOX_IMAGE } from '../../helpers/containerd';
import { startNetnsCluster, type NetnsCluster } from '../../helpers/netns-cluster';
import { eventually, kubectlJson, kubectlStdin } from '../agent/agent-process';

const CLUSTER_CIDR = '10.244.0.0/16';

interface NodeJson {
  spec: { podCIDR?: string; podCIDRs?: string[] };
}
interface PodJson {
  status: { phase?: string; podIP?: string; containerStatuses?: { containerID?: string }[] };
}

let cluster: NetnsCluster | undefined;
const c = (): NetnsCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

test.before(async () => {
  cluster = await startNetnsCluster({ apiArgs: [`--cluster-cidr=${CLUSTER_CIDR}`] });
});

test.after.always(async () => {
  await cluster?.stop();
});

async function podCIDR(node: string): Promise<string> {
  return eventually(`${node} has a podCIDR`, async () => (await kubectlJson<NodeJson>(c().kubeconfig, ['get', 'node', node])).spec.podCIDR || undefined, 30_000, 200);
}

const ourRoutes = (n: NetnsCluster['nodes'][number]) => n.exec('ip', '-4', 'route', 'show', 'proto', ROUTE_PROTO);

test.serial('each Node gets a podCIDR; each agent writes its CNI config for it and routes the other podCIDR through the other node', async (t) => {
  const [a, b] = c().nodes as [NetnsCluster['nodes'][number], NetnsCluster['nodes'][number]];
  const cidrA = await podCIDR(a.name);
  const cidrB = await podCIDR(b.name);
  t.regex(cidrA, /^10\.244\.\d+\.0\/24$/);
  t.not(cidrA, cidrB);
  for (const [n, cidr] of [[a, cidrA], [b, cidrB]] as const) {
    const file = path.join(n.ctrd.cniConfDir, CNI_CONFIG_FILE);
    const conf = await eventually(`${n.name}'s CNI config`, () => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { plugins: { type: string; ipam?: { ranges: { subnet: string }[][] } }[] }) : undefined), 30_000, 200);
    t.deepEqual(conf.plugins.map((p) => p.type), ['bridge', 'portmap']);
    t.is(conf.plugins[0].ipam!.ranges[0][0].subnet, cidr);
  }
  const routeA = await eventually('node A routes to B', async () => ((await ourRoutes(a)).includes(cidrB) ? await ourRoutes(a) : undefined), 30_000, 200);
  t.true(routeA.trim().replace(/\s+/g, ' ').startsWith(`${cidrB} via ${b.ip} dev eth0`), routeA);
  const routeB = await eventually('node B routes to A', async () => ((await ourRoutes(b)).includes(cidrA) ? await ourRoutes(b) : undefined), 30_000, 200);
  t.true(routeB.trim().replace(/\s+/g, ' ').startsWith(`${cidrA} via ${a.ip} dev eth0`), routeB);
});

test.serial('a third Node (no agent) gets a route on both nodes once it has a podCIDR and an InternalIP; deleting it takes the routes away', async (t) => {
  const cl = c();
  const ghostIp = cl.nodes[0].ip.replace(/\.\d+$/, '.9');
  await kubectlStdin(cl.kubeconfig, ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-c' } }));
  const cidr = await podCIDR('node-c');
  await kubectlStdin(cl.kubeconfig, ['patch', 'node', 'node-c', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { addresses: [{ type: 'InternalIP', address: ghostIp }] } })], '');
  for (const n of cl.nodes) {
    const routes = await eventually(`${n.name} routes to node-c`, async () => ((await ourRoutes(n)).includes(cidr) ? await ourRoutes(n) : undefined), 30_000, 200);
    t.regex(routes, new RegExp(`^${cidr.replace(/\./g, '\\.')} via ${ghostIp.replace(/\./g, '\\.')} dev eth0`, 'm'));
  }
  await kubectlStdin(cl.kubeconfig, ['delete', 'node', 'node-c'], '');
  for (const n of cl.nodes) {
    await eventually(`${n.name}'s route to node-c gone`, async () => (!(await ourRoutes(n)).includes(cidr) ? true : undefined), 30_000, 200);
    t.is((await ourRoutes(n)).split('\n').filter(Boolean).length, 1, `${n.name} keeps its route to the other agent's node`);
  }
});

function pod(name: string, node: string, command: string[], container: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: node,
      shareProcessNamespace: true,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command, ...container }],
    },
  });
}

async function running(name: string): Promise<{ ip: string; container: string }> {
  return eventually(`${name} running with an IP`, async () => {
    const p = await kubectlJson<PodJson>(c().kubeconfig, ['get', 'pod', name]);
    const id = p.status.containerStatuses?.[0]?.containerID ?? '';
    return p.status.phase === 'Running' && p.status.podIP && id.startsWith('containerd://') ? { ip: p.status.podIP, container: id.slice('containerd://'.length) } : undefined;
  }, 90_000, 300);
}

test.serial('a pod on node A reaches an httpd pod on node B by pod IP and through its hostPort', async (t) => {
  const [a, b] = c().nodes as [NetnsCluster['nodes'][number], NetnsCluster['nodes'][number]];
  const web = ['sh', '-c', `mkdir -p /www && echo "hello from ${b.name}" > /www/index.html && exec httpd -f -p 80 -h /www`];
  await kubectlStdin(c().kubeconfig, ['create', '-f', '-'], pod('web', b.name, web, { ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] }));
  await kubectlStdin(c().kubeconfig, ['create', '-f', '-'], pod('client', a.name, ['sleep', '3600']));
  const w = await running('web');
  const cl = await running('client');
  t.true(w.ip.startsWith((await podCIDR(b.name)).split('.').slice(0, 3).join('.') + '.'), `web's IP ${w.ip} is in node B's podCIDR`);
  t.true(cl.ip.startsWith((await podCIDR(a.name)).split('.').slice(0, 3).join('.') + '.'), `client's IP ${cl.ip} is in node A's podCIDR`);
  const cri = new GrpcRuntimeService(a.ctrd.endpoint, a.ctrd.endpoint, { timeoutMs: 30_000 });
  try {
    const fetch = async (url: string) => {
      // No -T: Debian's busybox 1.35 wget crashes with it (SIGSEGV); the exec's own timeout bounds it.
      const out = await cri.execSync(cl.container, ['wget', '-qO-', url], 10);
      return out.exitCode === 0 ? out.stdout.toString() : undefined;
    };
    // httpd may take a moment to listen after the container starts.
    t.is(await eventually('the page by pod IP', () => fetch(`http://${w.ip}/`), 30_000, 300), `hello from ${b.name}\n`);
    t.is(await eventually('the page through the hostPort', () => fetch(`http://${b.ip}:8080/`), 30_000, 300), `hello from ${b.name}\n`);
  } finally {
    cri.close();
  }
});

test.serial('a crashed agent restarted keeps the routes still wanted and removes the stale ones of its earlier run', async (t) => {
  const [a, b] = c().nodes as [NetnsCluster['nodes'][number], NetnsCluster['nodes'][number]];
  const cidrB = await podCIDR(b.name);
  // A route of ours to a podCIDR no Node holds any more (as if its Node went while the agent was down).
  await a.exec('ip', 'route', 'replace', '10.244.250.0/24', 'via', b.ip, 'proto', ROUTE_PROTO);
  await a.restartAgent();
  await a.agent.waitForLog('removed a stale route of an earlier run', 30_000);
  const routes = await ourRoutes(a);
  t.notRegex(routes, /10\.244\.250\.0/);
  t.true(routes.includes(`${cidrB} via ${b.ip}`), routes);
  t.true(existsSync(path.join(a.ctrd.cniConfDir, CNI_CONFIG_FILE)), 'its CNI config is still there');
});

test.serial("a node's own identity may list and watch every Node through the default system:svc-node-proxier binding (the Node authorizer alone allows only its own)", async (t) => {
  const canI = (verb: string) =>
    new Promise<string>((resolve) =>
      execFile('/usr/bin/kubectl', ['--kubeconfig', c().kubeconfig, 'auth', 'can-i', verb, 'nodes', '--as=system:node:node-a', '--as-group=system:nodes', '--as-group=system:authenticated'], { encoding: 'utf8', timeout: 20_000 }, (_err, stdout) => resolve(stdout.trim())),
    );
  t.is(await canI('list'), 'yes');
  t.is(await canI('watch'), 'yes');
  await kubectlStdin(c().kubeconfig, ['delete', 'clusterrolebinding', 'system:svc-node-proxier'], '');
  t.regex(await eventually('list refused', async () => ((await canI('list')).startsWith('no') ? await canI('list') : undefined), 10_000, 200), /^no - node 'node-a' cannot read '', only its own Node object/);
});

test.serial("stopped agents take their routes and CNI configs with them; nothing of the test's is left", async (t) => {
  const cl = c();
  // Pods go before the agents stop: with its CNI config removed, a runtime cannot tear a pod's
  // network down (containerd: "cni plugin not initialized") until the agent writes it again.
  await kubectlStdin(cl.kubeconfig, ['delete', 'pods', '--all', '--wait=true', '--timeout=60s'], '');
  for (const n of cl.nodes) t.is(await n.stopAgent(), 0, `${n.name} exits cleanly`);
  for (const n of cl.nodes) {
    t.is((await ourRoutes(n)).trim(), '', `${n.name}'s routes are gone`);
    t.false(existsSync(path.join(n.ctrd.cniConfDir, CNI_CONFIG_FILE)), `${n.name}'s CNI config is gone`);
  }
  await cl.stop();
  t.deepEqual(await cl.leftovers(), []);
});
