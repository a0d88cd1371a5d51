/**
 * Two nodes on one machine, each in a network namespace of its own, for pod networking e2e
 * tests (issue 24): a third namespace ("hub") holds a bridge; each node namespace is joined to it
 * by a veth pair (eth0 inside), and one more veth pair joins the host to it, so one real
 * svc-apiserver in the host namespace (listening only on the host end's address) serves both
 * agents. Per node: its own containerd (./containerd, run in the node's namespace) and a real
 * svc-node in the same namespace, pointed at that containerd's socket and CNI config directory
 * (the agent writes the pod network config there, containerd has none of its own).
 *
 *   host: svcpn<tag>h 10.N.N.1/24 ── hub: bridge br0 ── eth0 10.N.N.2/24 (node A) / eth0 10.N.N.3/24 (node B)
 *
 * The /24 is one no host route uses; the pods' cluster CIDR lives only inside the namespaces.
 * Nothing leaves loopback and these namespaces. stop() removes everything: agents, containerds
 * (their pods, shims, mounts, state folders), the namespaces (with every link in them) and the
 * host end, and reports what it could not remove in leftovers().
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startAgent, type AgentProcess } from '../e2e/agent/agent-process';
import { kubeconfig as kubeconfigYaml } from '../../apiserver/pki/bootstrap';
import { issue } from '../../apiserver/pki/certs';
import { startApiServer, type RunningApiServer } from './apiserver-process';
import { requireContainerdTools, startContainerd, type Containerd } from './containerd';
import { freePort } from './free-port';

const run = promisify(execFile);

export interface NetnsNode {
  name: string;
  /** The named network namespace (/run/netns/<netns>). */
  netns: string;
  /** Its eth0 address: the Node's InternalIP. */
  ip: string;
  ctrd: Containerd;
  /** The running agent (a new one after restartAgent). */
  agent: AgentProcess;
  /** The agent's folder (root dir, config). */
  dir: string;
  /** Runs a command in the node's network namespace; resolves stdout. */
  exec(...argv: string[]): Promise<string>;
  /** Stops the agent with SIGTERM (a clean shutdown); resolves its exit code. */
  stopAgent(): Promise<number | null>;
  /** Kills the agent (SIGKILL, as a crash) and starts it again with the same folder; resolves once it heartbeats. */
  restartAgent(): Promise<void>;
}

export interface NetnsCluster {
  api: RunningApiServer;
  /** The host end's address (the API server's): what the nodes see as a client outside the cluster. */
  hostIp: string;
  /** A kubeconfig reaching the API server at the host end's address. */
  kubeconfig: string;
  nodes: NetnsNode[];
  /** Names of everything made (namespaces, host link) that is still there; [] once stopped. */
  leftovers(): Promise<string[]>;
  /** Tears everything down; idempotent, never rejects. */
  stop(): Promise<void>;
}

export interface NetnsClusterOptions {
  /** Flags of the API server (e.g. --cluster-cidr). */
  apiArgs?: string[];
  /** NodeAgentConfiguration lines for every agent. */
  configLines?: string[];
  /** How long registration may take (default 90 s). */
  registerBoundMs?: number;
  /**
   * Run each agent under its own node identity (a client certificate for `system:node:<name>`
   * in `system:nodes`, signed by the API server's CA) as a real node does, so the Node
   * authorizer and the nodes' RBAC grants are exercised; default: the admin kubeconfig.
   */
  nodeIdentity?: boolean;
}

const sh = async (argv: string[]): Promise<string> => (await run(argv[0], argv.slice(1), { timeout: 30_000, maxBuffer: 4 << 20 })).stdout;

/** A 10.x.y.0/24 prefix ("10.x.y.") that no route on the host uses. */
async function freePrefix(): Promise<string> {
  const routes = await sh(['ip', '-4', '-o', 'route', 'show', 'table', 'all']).catch(() => '');
  const addrs = await sh(['ip', '-4', '-o', 'addr', 'show']).catch(() => '');
  for (let i = 0; i < 50; i++) {
    const [a, b] = randomBytes(2);
    const prefix = `10.${150 + ((a ?? 0) % 50)}.${b ?? 0}.`;
    if (!routes.includes(prefix) && !addrs.includes(prefix)) return prefix;
  }
  throw new Error('no free 10.x.y.0/24 for the namespaces');
}

/** A kubeconfig in `dir` for the node's own identity, with a client certificate signed by the API server's CA. */
async function nodeKubeconfig(api: RunningApiServer, server: string, node: string, dir: string): Promise<string> {
  const pki = path.join(api.dataDir, 'pki');
  const ca = { certPem: readFileSync(path.join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(path.join(pki, 'ca.key'), 'utf8') };
  const id = await issue(ca, { commonName: `system:node:${node}`, organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
  const file = path.join(dir, 'node.kubeconfig');
  writeFileSync(file, kubeconfigYaml({ server, caPem: api.caPem, user: `system:node:${node}`, ...id }), { mode: 0o600 });
  return file;
}

export async function startNetnsCluster(o: NetnsClusterOptions = {}): Promise<NetnsCluster> {
  requireContainerdTools();
  const tag = randomBytes(4).toString('hex');
  const hub = `svcpn-${tag}-hub`;
  const hostLink = `svcpn${tag}h`;
  const prefix = await freePrefix();
  const hostIp = `${prefix}1`;
  const made: string[] = [];
  const nodes: NetnsNode[] = [];
  const ctrds: Containerd[] = [];
  const dirs: string[] = [];
  let api: RunningApiServer | undefined;
  const inNs = (ns: string, ...argv: string[]) => sh(['ip', 'netns', 'exec', ns, ...argv]);

  let stopping: Promise<void> | undefined;
  const teardown = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.agent.stop('SIGKILL').catch(() => undefined)));
    await Promise.all(ctrds.map((c) => c.stop()));
    await api?.stop().catch(() => undefined);
    // Deleting a namespace deletes its links, and a veth's peer with it.
    for (const ns of made) await sh(['ip', 'netns', 'del', ns]).catch(() => undefined);
    if (existsSync(`/sys/class/net/${hostLink}`)) await sh(['ip', 'link', 'del', hostLink]).catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  const cluster = {
    stop: () => (stopping ??= teardown()),
    async leftovers() {
      const found: string[] = [];
      const namespaces = await sh(['ip', 'netns', 'list']).catch(() => '');
      for (const ns of made) if (namespaces.split('\n').some((l) => l.split(' ')[0] === ns)) found.push(`netns ${ns}`);
      if (existsSync(`/sys/class/net/${hostLink}`)) found.push(`link ${hostLink}`);
      for (const c of ctrds) found.push(...(await c.leftovers()));
      for (const d of dirs) if (existsSync(d)) found.push(`dir ${d}`);
      return found;
    },
  };

  try {
    // The hub: a bridge, the host's veth end joined to it.
    await sh(['ip', 'netns', 'add', hub]);
    made.push(hub);
    await inNs(hub, 'ip', 'link', 'set', 'lo', 'up');
    await inNs(hub, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
    await inNs(hub, 'ip', 'link', 'set', 'br0', 'up');
    await sh(['ip', 'link', 'add', hostLink, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', hub]);
    await sh(['ip', 'addr', 'add', `${hostIp}/24`, 'dev', hostLink]);
    await sh(['ip', 'link', 'set', hostLink, 'up']);
    await inNs(hub, 'ip', 'link', 'set', 'uplink', 'master', 'br0', 'up');
    const names = ['a', 'b'];
    for (const [i, name] of names.entries()) {
      const ns = `svcpn-${tag}-${name}`;
      await sh(['ip', 'netns', 'add', ns]);
      made.push(ns);
      await inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
      await inNs(hub, 'ip', 'link', 'add', `to-${name}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      await inNs(hub, 'ip', 'link', 'set', `to-${name}`, 'master', 'br0', 'up');
      await inNs(ns, 'ip', 'addr', 'add', `${prefix}${i + 2}/24`, 'dev', 'eth0');
      await inNs(ns, 'ip', 'link', 'set', 'eth0', 'up');
      // A node forwards for its pods (the bridge plugin turns this on too, with isGateway).
      await inNs(ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    }

    const port = await freePort();
    api = await startApiServer({ host: hostIp, port, args: o.apiArgs ?? [] });
    const kubeconfig = path.join(api.dataDir, 'netns.kubeconfig');
    writeFileSync(kubeconfig, readFileSync(api.kubeconfig, 'utf8').replace(`https://127.0.0.1:${port}`, `https://${hostIp}:${port}`));

    // Both containerds at once: starting one imports the busybox image, the slow part.
    const started = await Promise.allSettled(names.map((name) => startContainerd({ cni: false, netns: `svcpn-${tag}-${name}` })));
    for (const s of started) if (s.status === 'fulfilled') ctrds.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;

    for (const [i, name] of names.entries()) {
      const ns = `svcpn-${tag}-${name}`;
      const ip = `${prefix}${i + 2}`;
      const ctrd = ctrds[i];
      const dir = mkdtempSync(path.join(tmpdir(), `svc-podnet-${name}-`));
      dirs.push(dir);
      const agentOptions = {
        dir,
        nodeName: `node-${name}`,
        kubeconfig: o.nodeIdentity ? await nodeKubeconfig(api, `https://${hostIp}:${port}`, `node-${name}`, dir) : kubeconfig,
        netns: ns,
        args: [`--node-ip=${ip}`],
        configLines: [`containerRuntimeEndpoint: ${ctrd.endpoint}`, `podLogsDir: ${ctrd.logRoot}`, `cniConfDir: ${ctrd.cniConfDir}`, 'nodeStatusUpdateFrequency: 1s', ...(o.configLines ?? [])],
      };
      const node: NetnsNode = {
        name: `node-${name}`,
        netns: ns,
        ip,
        ctrd,
        agent: startAgent(agentOptions),
        dir,
        exec: (...argv) => inNs(ns, ...argv),
        stopAgent: () => node.agent.stop('SIGTERM'),
        async restartAgent() {
          await node.agent.stop('SIGKILL');
          node.agent = startAgent(agentOptions);
          await node.agent.waitForLog('node registered and heartbeating', o.registerBoundMs ?? 90_000);
        },
      };
      nodes.push(node);
    }
    await Promise.all(nodes.map((n) => n.agent.waitForLog('node registered and heartbeating', o.registerBoundMs ?? 90_000)));
    return { api, hostIp, kubeconfig, nodes, ...cluster };
  } catch (e) {
    await cluster.stop();
    throw e;
  }
}
