/**
 * A "node" network namespace that routes between "pod" namespaces, for the NetworkPolicy e2e
 * test: each pod namespace has one address (/32) on a veth whose peer is in the node namespace,
 * with a route to it and proxy ARP there (a routed pod network, as host-gateway plugins make), so
 * pod-to-pod traffic crosses the node's forward hook. No traffic leaves these namespaces.
 * destroy() kills the servers and deletes every namespace (links and tables go with them).
 * Needs root and iproute2.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export interface PodNet {
  nodeNs: string;
  /** Pod namespace name and address, by the test's pod name. */
  pods: Map<string, { ns: string; ip: string }>;
  /** Starts an HTTP server in a pod answering its name on port; resolves once it listens. */
  serve(pod: string, port: number): Promise<void>;
  /** One GET from a pod: the body, or "ERR:<code>" (TIMEOUT when dropped). */
  get(from: string, url: string, timeoutMs: number): Promise<string>;
  destroy(): void;
}

const GET = `const r=require('http').get(process.argv[1],{timeout:Number(process.argv[2])},(s)=>{let b='';s.on('data',(d)=>b+=d);s.on('end',()=>process.stdout.write(b))});r.on('timeout',()=>r.destroy(Object.assign(new Error('t'),{code:'TIMEOUT'})));r.on('error',(e)=>process.stdout.write('ERR:'+(e.code||e.message)));`;
const SERVE = `const [ip,port,name]=process.argv.slice(1);require('http').createServer((q,s)=>s.end(name)).listen(Number(port),ip,()=>process.stdout.write('listening\\n'));`;

export function makePodNet(tag: string, subnet: number, podNames: readonly string[]): PodNet {
  const nodeNs = `svcn-${tag}-node`;
  const pods = new Map(podNames.map((p, i) => [p, { ns: `svcn-${tag}-${i}`, ip: `10.252.${subnet}.${10 + i}` }]));
  const servers: ChildProcess[] = [];
  const run = (argv: string[]) => execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const exec = (ns: string, argv: string[]) => run(['ip', 'netns', 'exec', ns, ...argv]);
  const destroy = () => {
    for (const s of servers) s.kill('SIGKILL');
    for (const ns of [nodeNs, ...[...pods.values()].map((p) => p.ns)]) {
      try {
        run(['ip', 'netns', 'del', ns]);
      } catch {
        // absent already
      }
    }
  };
  destroy(); // namespaces left by a killed run
  try {
    run(['ip', 'netns', 'add', nodeNs]);
    exec(nodeNs, ['ip', 'link', 'set', 'lo', 'up']);
    exec(nodeNs, ['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    let i = 0;
    for (const { ns, ip } of pods.values()) {
      const host = `vp${i++}`;
      run(['ip', 'netns', 'add', ns]);
      run(['ip', 'link', 'add', host, 'netns', nodeNs, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      exec(ns, ['ip', 'link', 'set', 'lo', 'up']);
      exec(ns, ['ip', 'addr', 'add', `${ip}/32`, 'dev', 'eth0']);
      exec(ns, ['ip', 'link', 'set', 'eth0', 'up']);
      exec(ns, ['ip', 'route', 'add', 'default', 'dev', 'eth0']);
      exec(nodeNs, ['ip', 'link', 'set', host, 'up']);
      exec(nodeNs, ['sysctl', '-qw', `net.ipv4.conf.${host}.proxy_arp=1`]);
      exec(nodeNs, ['ip', 'route', 'add', `${ip}/32`, 'dev', host]);
    }
  } catch (e) {
    destroy();
    throw e;
  }
  const serve = (pod: string, port: number) =>
    new Promise<void>((resolve, reject) => {
      const p = pods.get(pod)!;
      const child = spawn('ip', ['netns', 'exec', p.ns, process.execPath, '-e', SERVE, p.ip, String(port), pod], { stdio: ['ignore', 'pipe', 'pipe'] });
      servers.push(child);
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`server ${pod} exited ${code}: ${err}`)));
    });
  const get = (from: string, url: string, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn('ip', ['netns', 'exec', pods.get(from)!.ns, process.execPath, '-e', GET, url, String(timeoutMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`client exited ${code}: ${err}`))));
    });
  return { nodeNs, pods, serve, get, destroy };
}
