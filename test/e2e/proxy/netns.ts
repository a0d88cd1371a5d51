/**
 * Two network namespaces joined by a veth pair, for the proxy's e2e test and bench: a "client"
 * namespace (where the proxy's nftables table or iptables chains go, with a default route into the pair so cluster
 * IPs route) and an "endpoint" namespace with addresses for tiny Node HTTP servers. No traffic
 * leaves the pair. destroy() kills the servers and deletes both namespaces (their links and
 * tables and chains go with them). Needs root, iproute2, and nft or iptables.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

export interface Topology {
  clientNs: string;
  endpointNs: string;
  /** The client side's address. */
  clientIP: string;
  /** Addresses on the endpoint side, for servers. */
  endpointIPs: string[];
  /** Runs a command in a namespace; its output (throws with stderr on failure). Blocks: only for set-up. */
  exec(ns: string, argv: string[]): string;
  /** Runs a command in a namespace without blocking the event loop; resolves its output, rejects on failure. */
  run(ns: string, argv: string[]): Promise<string>;
  /** Starts an HTTP server in the endpoint namespace answering `name` on ip:port; resolves once it listens. */
  serve(ip: string, port: number, name: string): Promise<void>;
  /** Starts a UDP server in the endpoint namespace answering every datagram with `name`; resolves once bound. */
  serveUdp(ip: string, port: number, name: string): Promise<void>;
  /** One datagram from the client namespace, from a fixed source port: the answer, or "ERR:TIMEOUT". */
  udp(ip: string, port: number, sourcePort: number, timeoutMs?: number): Promise<string>;
  /** One GET from the client namespace: the body, or "ERR:<code>". */
  get(url: string, timeoutMs?: number): Promise<string>;
  /** One GET from the endpoint namespace, from `localAddress` (an endpoint reaching a Service): the body, or "ERR:<code>". */
  getFromEndpoint(url: string, localAddress: string, timeoutMs?: number): Promise<string>;
  destroy(): void;
}

/** A client script: GET url, print the body or ERR:<code>. */
const GET = `const u=process.argv[1];const t=Number(process.argv[2]);const la=process.argv[3];const r=require('http').get(u,{timeout:t,...(la?{localAddress:la}:{})},(s)=>{let b='';s.on('data',(d)=>b+=d);s.on('end',()=>{process.stdout.write(b)})});r.on('timeout',()=>{r.destroy(Object.assign(new Error('t'),{code:'TIMEOUT'}))});r.on('error',(e)=>process.stdout.write('ERR:'+(e.code||e.message)));`;
const UDP_SERVE = `const [ip,port,name]=process.argv.slice(1);const s=require('dgram').createSocket('udp4');s.on('message',(m,r)=>s.send(name,r.port,r.address));s.bind(Number(port),ip,()=>process.stdout.write('listening\\n'));`;
const UDP_ASK = `const [ip,port,src,t]=process.argv.slice(1);const s=require('dgram').createSocket({type:'udp4',reuseAddr:true});const done=(x)=>{process.stdout.write(x);process.exit(0)};s.on('message',(m)=>done(m.toString()));s.bind(Number(src),()=>{s.send('q',Number(port),ip);setTimeout(()=>done('ERR:TIMEOUT'),Number(t))});`;
const SERVE = `const [ip,port,name]=process.argv.slice(1);require('http').createServer((q,s)=>s.end(name)).listen(Number(port),ip,()=>process.stdout.write('listening\\n'));`;

export function makeTopology(tag: string, subnet: number): Topology {
  const clientNs = `svcp-${tag}-c`;
  const endpointNs = `svcp-${tag}-e`;
  const base = `10.251.${subnet}`;
  const servers: ChildProcess[] = [];
  const run = (argv: string[]) => execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const exec = (ns: string, argv: string[]) => run(['ip', 'netns', 'exec', ns, ...argv]);
  const destroy = () => {
    for (const s of servers) s.kill('SIGKILL');
    for (const ns of [clientNs, endpointNs]) {
      try {
        run(['ip', 'netns', 'del', ns]);
      } catch {
        // absent already
      }
    }
  };
  destroy(); // a namespace left by a killed run
  const endpointIPs = [`${base}.2`, `${base}.3`, `${base}.4`];
  try {
    run(['ip', 'netns', 'add', clientNs]);
    run(['ip', 'netns', 'add', endpointNs]);
    run(['ip', 'link', 'add', 'vc0', 'netns', clientNs, 'type', 'veth', 'peer', 'name', 've0', 'netns', endpointNs]);
    exec(clientNs, ['ip', 'link', 'set', 'lo', 'up']);
    exec(endpointNs, ['ip', 'link', 'set', 'lo', 'up']);
    exec(clientNs, ['ip', 'addr', 'add', `${base}.1/24`, 'dev', 'vc0']);
    for (const ip of endpointIPs) exec(endpointNs, ['ip', 'addr', 'add', `${ip}/24`, 'dev', 've0']);
    exec(clientNs, ['ip', 'link', 'set', 'vc0', 'up']);
    exec(endpointNs, ['ip', 'link', 'set', 've0', 'up']);
    // Cluster IPs route into the pair (DNAT rewrites them before they leave); replies come back the same way.
    exec(clientNs, ['ip', 'route', 'add', 'default', 'dev', 'vc0']);
    exec(endpointNs, ['ip', 'route', 'add', 'default', 'dev', 've0']);
  } catch (e) {
    destroy();
    throw e;
  }
  const serveWith = (script: string, ip: string, port: number, name: string) =>
    new Promise<void>((resolve, reject) => {
      const p = spawn('ip', ['netns', 'exec', endpointNs, process.execPath, '-e', script, ip, String(port), name], { stdio: ['ignore', 'pipe', 'pipe'] });
      servers.push(p);
      let err = '';
      p.stderr.on('data', (d: Buffer) => (err += d.toString()));
      p.stdout.once('data', () => resolve());
      p.once('exit', (code) => reject(new Error(`server ${name} exited ${code}: ${err}`)));
    });
  const serve = (ip: string, port: number, name: string) => serveWith(SERVE, ip, port, name);
  const serveUdp = (ip: string, port: number, name: string) => serveWith(UDP_SERVE, ip, port, name);
  const udp = (ip: string, port: number, sourcePort: number, timeoutMs = 1000) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn('ip', ['netns', 'exec', clientNs, process.execPath, '-e', UDP_ASK, ip, String(port), String(sourcePort), String(timeoutMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`udp client exited ${code}`))));
    });
  const getIn = (ns: string, url: string, timeoutMs: number, localAddress = '') =>
    new Promise<string>((resolve, reject) => {
      const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', GET, url, String(timeoutMs), ...(localAddress ? [localAddress] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (err += d.toString()));
      p.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`client exited ${code}: ${err}`))));
    });
  const get = (url: string, timeoutMs = 2000) => getIn(clientNs, url, timeoutMs);
  const getFromEndpoint = (url: string, localAddress: string, timeoutMs = 2000) => getIn(endpointNs, url, timeoutMs, localAddress);
  const runAsync = async (ns: string, argv: string[]) => (await promisify(execFile)('ip', ['netns', 'exec', ns, ...argv], { encoding: 'utf8' })).stdout;
  return { clientNs, endpointNs, clientIP: `${base}.1`, endpointIPs, exec, run: runAsync, serve, serveUdp, udp, get, getFromEndpoint, destroy };
}
