import { readFileSync, mkdtempSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// Before 'ws': this client masks as the agent unmasks, by words (a Go client such as kubectl masks natively).
import '../common/stream/ws-mask';
import WebSocket from 'ws';
import { startApiServer } from '../test/helpers/apiserver-process';
import { runPod, startNode } from '../test/e2e/checkpoint/checkpoint-env';
import type { Cleanup } from './lib/cleanup';
import { nodePidBehind, procCpuPrecise } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { percentile, round } from './lib/stats';

/** Issue 21's goals: exec p50 at most 1.5 x direct; port-forward throughput at least 0.5 x direct. */
export const GOAL_EXEC_RATIO = 1.5;
const GOAL_THROUGHPUT_RATIO = 0.5;
const NODE = 'bench-stream-node';
const POD = 'shell';
const CHUNK = 64 * 1024;
/** Execs of one path in a row (see runStreamingBench). */
export const EXEC_BLOCK = 10;
/** A TCP echo server printing its port: the direct connection to a pod of the throughput baseline. */
const ECHO_SERVER = "const s = require('net').createServer((c) => { c.on('error', () => c.destroy()); c.pipe(c); }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));";
/**
 * A relay in a process of its own (argv: target port, then certificate and key files when it
 * serves TLS, then "tls" when it dials the target over TLS), joining each connection to a new one
 * to the target with pipe() both ways: no framing, no authentication, nothing of svc. Two of them
 * in front of the echo make the through path's shape with no svc code: how far this machine lets
 * any relay chain go (context for the throughput goal, not a baseline).
 */
const RELAY = "const net = require('net'), tls = require('tls'), fs = require('fs'); const [to, cert, key, out] = process.argv.slice(1); const join = (c) => { c.on('error', () => c.destroy()); const o = out === 'tls' ? tls.connect({ port: +to, host: '127.0.0.1', rejectUnauthorized: false }) : net.connect(+to, '127.0.0.1'); o.setNoDelay(true); o.on('error', () => c.destroy()); c.pipe(o); o.pipe(c); }; const s = cert ? tls.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, join) : net.createServer(join); s.listen(0, '127.0.0.1', () => console.log(s.address().port));";
/** The same echo behind one TLS layer (argv: certificate and key files): context for what one TLS leg costs. */
const TLS_ECHO_SERVER = "const fs = require('fs'); const s = require('tls').createServer({ cert: fs.readFileSync(process.argv[1]), key: fs.readFileSync(process.argv[2]) }, (c) => { c.on('error', () => c.destroy()); c.pipe(c); }); s.listen(0, '127.0.0.1', () => console.log(s.address().port));";

export function numberArg(args: readonly string[], flag: string, dflt: number): number {
  const i = args.indexOf(flag);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${flag} wants a positive integer`);
  return v;
}

export interface Tls {
  ca?: string;
  cert: Buffer;
  key: Buffer;
}

function open(url: string, protocol: string, tls: Tls): WebSocket {
  return new WebSocket(url, [protocol], { ...tls, rejectUnauthorized: tls.ca !== undefined, servername: 'localhost', perMessageDeflate: false } as WebSocket.ClientOptions);
}

/** One `exec -- true` over WebSocket (v5 unless said): connect, upgrade, run, status, close; milliseconds. */
export function execOnce(url: string, tls: Tls, protocol = 'v5.channel.k8s.io'): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const ws = open(url, protocol, tls);
    let status = '';
    ws.on('message', (d: Buffer) => {
      if (d[0] === 3) status += d.subarray(1).toString();
    });
    ws.once('close', () => (status.includes('"Success"') ? resolve(performance.now() - started) : reject(new Error(`exec ended without success: ${status}`))));
    ws.once('error', reject);
  });
}

/** One GET of the pod over a fresh mutual-TLS connection: what the API server hop costs by itself; milliseconds. */
function getOnce(url: string, tls: Tls): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { ...tls, agent: false, servername: 'localhost' }, (res) => {
      res.resume();
      res.once('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`GET answered ${res.statusCode}`))));
    });
    req.once('error', reject);
  });
}

/** Sends `bytes` through a port-forward (v4.channel.k8s.io, data channel 0) to the simulator's echo and reads them back; MB/s. */
function portForwardOnce(url: string, tls: Tls, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = open(url, 'v4.channel.k8s.io', tls);
    const firsts = new Set<number>();
    let got = 0;
    let started = 0;
    ws.on('message', (d: Buffer) => {
      // The first frame of each channel carries the port (2 bytes), as upstream.
      if (!firsts.has(d[0])) {
        firsts.add(d[0]);
        return;
      }
      if (d[0] !== 0) return reject(new Error(`port-forward error: ${d.subarray(1).toString()}`));
      got += d.length - 1;
      if (got >= bytes) {
        const s = (performance.now() - started) / 1000;
        ws.terminate();
        resolve(bytes / 1e6 / s);
      }
    });
    ws.once('error', reject);
    ws.once('open', () => {
      started = performance.now();
      const chunk = Buffer.alloc(CHUNK + 1, 7);
      chunk[0] = 0;
      let sent = 0;
      let inFlight = 0;
      const pump = () => {
        while (sent < bytes && inFlight < 64) {
          sent += CHUNK;
          inFlight++;
          ws.send(chunk, { binary: true }, () => {
            inFlight--;
            pump();
          });
        }
      };
      pump();
    });
  });
}

/** The same transfer over plain TCP to an echo server (in its own process, as a pod), or over TLS with `tls`; MB/s. */
function tcpOnce(port: number, bytes: number, tls?: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(CHUNK, 7);
    let got = 0;
    let sent = 0;
    const started = performance.now();
    c.on('data', (d: Buffer) => {
      got += d.length;
      if (got >= bytes) {
        c.destroy();
        resolve(bytes / 1e6 / ((performance.now() - started) / 1000));
      }
    });
    c.on('error', reject);
    const pump = () => {
      while (sent < bytes) {
        sent += CHUNK;
        if (!c.write(chunk)) return void c.once('drain', pump);
      }
    };
    pump();
  });
}

/**
 * `npm run bench -- streaming [--iterations N] [--megabytes M]`: exec round trips (`exec -- true`,
 * WebSocket v5) through svc-apiserver and svc-node against the same exec sent straight to the
 * agent's /exec (the simulator's stream URL is in-process, so the agent is the closest callable
 * point), and a port-forward transfer of M MB (default 100) to the simulator's echo through both
 * against plain TCP to an echo server in its own process, all in the same run. Both clients here
 * mask their WebSocket frames by words (common/stream/ws-mask.ts) as the agent unmasks: a Go client
 * (kubectl) masks natively; ws's byte-at-a-time fallback made this client the bottleneck.
 */
export async function runStreamingBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  // 200 execs a path (60 before session 11): the p50 of more execs moves less with a few slow ones.
  const iterations = numberArg(args, '--iterations', 200);
  const megabytes = numberArg(args, '--megabytes', 100);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-stream-'));
  cleanup.dir(dir);
  progress('starting svc-apiserver');
  const api = await startApiServer({ dataDir: join(dir, 'apiserver') });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => void (await api.stop('SIGTERM')));
  progress('starting svc-node (sim:// runtime)');
  const node = await startNode(api, join(dir, 'node'), NODE);
  cleanup.child(node.agent.proc);
  cleanup.add('stop svc-node', async () => void (await node.agent.stop('SIGTERM')));
  await runPod(api, NODE, POD);
  const pki = join(api.dataDir, 'pki');
  const admin: Tls = { ca: api.caPem, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
  // The agent's serving certificate is self-signed: not verified, as the API server does by default.
  const kubelet: Tls = { cert: readFileSync(join(pki, 'apiserver-kubelet-client.crt')), key: readFileSync(join(pki, 'apiserver-kubelet-client.key')) };
  const viaApi = `wss://127.0.0.1:${api.port}/api/v1/namespaces/default/pods/${POD}`;
  const direct = `wss://127.0.0.1:${node.port}`;
  const pids: Pids = { bench_client: process.pid, apiserver: nodePidBehind(api.proc.pid!), agent: nodePidBehind(node.agent.proc.pid!) };
  progress(`exec round trips: ${iterations} each, in blocks of ${EXEC_BLOCK}`);
  const through: number[] = [];
  const straight: number[] = [];
  const gets: number[] = [];
  const cpuThrough: Cpu = {};
  const cpuStraight: Cpu = {};
  for (let i = 0; i < 5; i++) await execOnce(`${viaApi}/exec?command=true`, admin);
  // Blocks of EXEC_BLOCK execs of one path, ordered A-B-B-A (then again): what a process does after an
  // exec (sockets close, the API server's side of the stream ends) lands on the next exec of the
  // same path, not on the other path's measurement.
  const throughOnce = () => withCpu(pids, cpuThrough, () => execOnce(`${viaApi}/exec?command=true`, admin));
  const straightOnce = () => withCpu(pids, cpuStraight, () => execOnce(`${direct}/exec/default/${POD}/app?command=true&output=1&error=1`, kubelet));
  for (let done = 0, round = 0; done < iterations; round++) {
    const n = Math.min(EXEC_BLOCK, iterations - done);
    const order = round % 2 === 0 ? [through, straight] : [straight, through];
    for (const xs of order) for (let i = 0; i < n; i++) xs.push(await (xs === through ? throughOnce() : straightOnce()));
    done += n;
  }
  for (let i = 0; i < iterations; i++) gets.push(await getOnce(`https://127.0.0.1:${api.port}/api/v1/namespaces/default/pods/${POD}`, admin));
  const pf = await portForwardPart(megabytes, pids, { viaApi, direct, admin, kubelet, pki }, cleanup);
  const med = (xs: number[]) => percentile(xs, 0.5);
  const execRatio = med(through) / med(straight);
  return {
    machine: { cpus: cpus().length, loadavg: loadavg().map((l) => round(l)) },
    exec_round_trip: {
      through_apiserver_and_agent: { p50_ms: round(med(through)), p99_ms: round(percentile(through, 0.99)), n: through.length, cpu_ms_per_exec: perOp(cpuThrough, iterations, 1000) },
      baseline_direct_to_agent: { p50_ms: round(med(straight)), p99_ms: round(percentile(straight, 0.99)), n: straight.length, cpu_ms_per_exec: perOp(cpuStraight, iterations, 1000) },
      ratio_p50: round(execRatio),
      // What one more mutual-TLS hop and the API server's checks cost without any stream: a GET of the pod on a fresh connection.
      fresh_connection_get_pod: { p50_ms: round(med(gets)), n: gets.length },
      goal_ratio_at_most: GOAL_EXEC_RATIO,
      goal_met: execRatio <= GOAL_EXEC_RATIO,
    },
    port_forward_throughput: pf,
  };
}

export type Pids = Record<string, number>;
export type Cpu = Record<string, number>;

/** Runs f, adding the CPU seconds each process used meanwhile to acc (read outside f's own timing). */
export async function withCpu<T>(pids: Pids, acc: Cpu, f: () => Promise<T>): Promise<T> {
  const before = Object.entries(pids).map(([k, pid]) => [k, procCpuPrecise(pid)] as const);
  const r = await f();
  for (const [k, b] of before) acc[k] = (acc[k] ?? 0) + procCpuPrecise(pids[k]) - b;
  return r;
}

export const perOp = (acc: Cpu, n: number, scale: number) => Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, round((v * scale) / n)]));

/** Starts an echo server script in its own process; resolves its port. */
async function startEcho(script: string, args: string[], name: string, cleanup: Cleanup): Promise<{ port: number; pid: number }> {
  const echo = spawn(process.execPath, ['-e', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup.child(echo);
  cleanup.add(`stop the ${name}`, () => Promise.resolve(void echo.kill('SIGTERM')));
  const port = await new Promise<number>((resolve, reject) => {
    echo.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    echo.once('exit', (code) => reject(new Error(`the ${name} exited (${code})`)));
  });
  return { port, pid: echo.pid! };
}

/**
 * Three rounds of: the port-forward through the API server, straight to the agent, plain TCP to
 * the echo process (the goal's baseline), and (context, not baselines) the same echo behind one
 * TLS layer and behind two relay processes (RELAY) without and with TLS; with each process's CPU
 * per run.
 */
async function portForwardPart(megabytes: number, pids: Pids, t: { viaApi: string; direct: string; admin: Tls; kubelet: Tls; pki: string }, cleanup: Cleanup): Promise<object> {
  const bytes = megabytes * 1e6;
  progress(`port-forward: ${megabytes} MB each way, three runs each`);
  // The baseline's pod: an echo server in a process of its own (the simulator's pod echo runs in
  // the agent's process; an echo inside this client's process would share its thread).
  const echo = await startEcho(ECHO_SERVER, [], 'echo server', cleanup);
  const keyPair = [join(t.pki, 'apiserver.crt'), join(t.pki, 'apiserver.key')];
  const tlsEcho = await startEcho(TLS_ECHO_SERVER, keyPair, 'TLS echo server', cleanup);
  // client -> relay -> relay -> echo, plain TCP; and with the through path's TLS legs (client =TLS=> relay =TLS=> relay -> echo).
  const plainRelay = await startEcho(RELAY, [String((await startEcho(RELAY, [String(echo.port)], 'relay', cleanup)).port)], 'relay', cleanup);
  const tlsRelay = await startEcho(RELAY, [String((await startEcho(RELAY, [String(echo.port), ...keyPair], 'TLS relay', cleanup)).port), ...keyPair, 'tls'], 'TLS relay', cleanup);
  const runs = { through: [] as number[], direct: [] as number[], tcp: [] as number[], tls: [] as number[], relays: [] as number[], tlsRelays: [] as number[] };
  const cpu = { through: {} as Cpu, direct: {} as Cpu, tcp: {} as Cpu, tls: {} as Cpu };
  const withEcho = (pid: number) => ({ bench_client: pids.bench_client, echo: pid });
  for (let i = 0; i < 3; i++) {
    runs.through.push(await withCpu(pids, cpu.through, () => portForwardOnce(`${t.viaApi}/portforward?ports=8080`, t.admin, bytes)));
    runs.direct.push(await withCpu(pids, cpu.direct, () => portForwardOnce(`${t.direct}/portForward/default/${POD}?port=8080`, t.kubelet, bytes)));
    runs.tcp.push(await withCpu(withEcho(echo.pid), cpu.tcp, () => tcpOnce(echo.port, bytes)));
    runs.tls.push(await withCpu(withEcho(tlsEcho.pid), cpu.tls, () => tcpOnce(tlsEcho.port, bytes, true)));
    runs.relays.push(await tcpOnce(plainRelay.port, bytes));
    runs.tlsRelays.push(await tcpOnce(tlsRelay.port, bytes, true));
  }
  const med = (xs: number[]) => percentile(xs, 0.5);
  const ratio = med(runs.through) / med(runs.tcp);
  return {
    megabytes_echoed: megabytes,
    through_apiserver_and_agent_mb_s: round(med(runs.through)),
    direct_to_agent_mb_s: round(med(runs.direct)),
    baseline_direct_tcp_mb_s: round(med(runs.tcp)),
    // Context only: the same echo over one TLS connection (the through path has two TLS legs and the API server decrypts and re-encrypts every byte).
    context_one_tls_leg_echo_mb_s: round(med(runs.tls)),
    // Context only: the same echo behind two relay processes that only pipe bytes (RELAY), without and with the through path's two TLS legs, against plain TCP.
    context_two_relays_ratio: round(med(runs.relays) / med(runs.tcp)),
    context_two_tls_relays_ratio: round(med(runs.tlsRelays) / med(runs.tcp)),
    cpu_s_per_run: { through: perOp(cpu.through, 3, 1), direct_to_agent: perOp(cpu.direct, 3, 1), direct_tcp: perOp(cpu.tcp, 3, 1), one_tls_leg: perOp(cpu.tls, 3, 1) },
    ratio: round(ratio),
    goal_ratio_at_least: GOAL_THROUGHPUT_RATIO,
    goal_met: ratio >= GOAL_THROUGHPUT_RATIO,
  };
}
