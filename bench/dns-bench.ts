/**
 * `npm run bench -- dns` (issue 24, item 4): queries/s for a service name answered by svc-node's
 * cluster DNS server code against the node's resolver answering a hosts-file name, in the same
 * run. The baseline is dnsmasq (Debian's dnsmasq-base) serving an addn-hosts file on loopback; when
 * dnsmasq is not installed, the minimal dns-packet responder of test/helpers (also always measured
 * as a second reference). The server under test runs in its own process (bench/dns-server-child.ts)
 * with 1,000 Services in its records, and forwards to the baseline: a forwarded name answered
 * from its cache is measured too. Load: one UDP socket in this process keeping `--in-flight`
 * queries outstanding (closed loop), `--count` answers per part after a warm-up, parts in A-B-B-A
 * order so other work on the shared machine skews both alike. Server CPU per query from /proc.
 */
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as dnsPacket from 'dns-packet';
import type { Cleanup } from './lib/cleanup';
import { procCpuPrecise } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { ratio, round } from './lib/stats';
import { freePort } from '../test/helpers/free-port';

interface Target {
  name: string;
  port: number;
  pid: number;
}

const arg = (args: readonly string[], name: string, def: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def);

function startChild(args: string[], cleanup: Cleanup): Promise<Target> {
  const proc = spawn(process.execPath, [join(__dirname, 'dns-server-child.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanup.child(proc);
  cleanup.add('stop dns child', () => {
    proc.kill('SIGTERM');
  });
  let out = '';
  proc.stderr.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`dns child exited ${code}: ${out}`)));
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ name: '', port: Number(m[1]), pid: proc.pid! });
    });
  });
}

async function startDnsmasq(hostsFile: string, cleanup: Cleanup): Promise<Target | undefined> {
  if (spawnSync('sh', ['-c', 'command -v dnsmasq'], { encoding: 'utf8' }).status !== 0) return undefined;
  const port = await freePort();
  const proc = spawn(
    'dnsmasq',
    ['--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', `--addn-hosts=${hostsFile}`, '--listen-address=127.0.0.1', '--bind-interfaces', `--port=${port}`, '--pid-file=', '--cache-size=10000', '--local-ttl=300', '--user=root'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  cleanup.child(proc);
  cleanup.add('stop dnsmasq', () => {
    proc.kill('SIGTERM');
  });
  // Ready once it answers.
  for (let i = 0; i < 100; i++) {
    const ok = await runLoad(port, 'host-1.bench.test', 1, 1, 500).then(
      () => true,
      () => false,
    );
    if (ok) return { name: 'dnsmasq', port, pid: proc.pid! };
  }
  throw new Error('dnsmasq did not answer');
}

/** Sends `count` queries for one name keeping `inFlight` outstanding; resolves the elapsed ms. Rejects if any answer is not NOERROR with an answer. */
function runLoad(port: number, name: string, count: number, inFlight: number, timeoutMs = 30_000): Promise<number> {
  const sock = dgram.createSocket('udp4');
  const queries = Array.from({ length: 65536 }, () => undefined as Buffer | undefined);
  let sent = 0;
  let done = 0;
  const start = process.hrtime.bigint();
  const build = (id: number) => (queries[id] ??= dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name, class: 'IN' }] }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`load on ${name}: ${done}/${count} answers in ${timeoutMs} ms`)), timeoutMs);
    const finish = (err?: Error) => {
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(Number(process.hrtime.bigint() - start) / 1e6);
    };
    const sendOne = () => {
      const id = sent++ & 0xffff;
      sock.send(build(id), port, '127.0.0.1');
    };
    sock.on('message', (msg) => {
      // rcode in the low 4 bits of byte 3; an answer count in bytes 6-7.
      if ((msg[3] & 0xf) !== 0 || msg.readUInt16BE(6) === 0) return finish(new Error(`unexpected answer for ${name}: rcode ${msg[3] & 0xf}`));
      done++;
      if (done === count) return finish();
      if (sent < count) sendOne();
    });
    sock.bind(0, '127.0.0.1', () => {
      for (let i = 0; i < Math.min(inFlight, count); i++) sendOne();
    });
  });
}

async function measure(t: Target, name: string, count: number, inFlight: number) {
  const cpu0 = procCpuPrecise(t.pid);
  const ms = await runLoad(t.port, name, count, inFlight);
  const cpu = procCpuPrecise(t.pid) - cpu0;
  return { ms, cpuSeconds: cpu };
}

export async function runDnsBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const count = arg(args, 'count', 20_000);
  const inFlight = arg(args, 'in-flight', 16);
  const dir = mkdtempSync(join(tmpdir(), 'svc-dns-bench-'));
  cleanup.dir(dir);
  const hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, Array.from({ length: 1000 }, (_, i) => `192.0.2.${i % 250} host-${i}.bench.test`).join('\n') + '\n');
  progress('starting the baselines (dnsmasq if installed, the minimal responder) and the svc DNS server');
  const responder = { ...(await startChild(['--mode=responder', `--hosts-file=${hostsFile}`], cleanup)), name: 'minimal dns-packet responder' };
  const dnsmasq = await startDnsmasq(hostsFile, cleanup);
  const baseline = dnsmasq ?? responder;
  const svc = { ...(await startChild(['--mode=svc', '--services=1000', `--upstream-port=${baseline.port}`], cleanup)), name: 'svc-node cluster DNS' };
  const hostName = 'host-1.bench.test';
  const serviceName = 'svc-500.default.svc.cluster.local';
  progress('warm-up');
  for (const [t, n] of [[svc, serviceName], [svc, hostName], [baseline, hostName], [responder, hostName]] as const) await runLoad(t.port, n, 2000, inFlight);
  const parts: Record<string, { ms: number; cpuSeconds: number }[]> = { service: [], forwardedCached: [], baseline: [], responder: [] };
  // A-B-B-A: service, forwarded-cached, baseline, responder, then the reverse.
  const order: [keyof typeof parts, Target, string][] = [
    ['service', svc, serviceName],
    ['forwardedCached', svc, hostName],
    ['baseline', baseline, hostName],
    ['responder', responder, hostName],
  ];
  for (const [key, t, n] of [...order, ...[...order].reverse()]) {
    progress(`${key}: ${count} queries for ${n} on ${t.name}`);
    parts[key].push(await measure(t, n, count, inFlight));
  }
  const fig = (key: keyof typeof parts) => {
    const ms = parts[key].reduce((a, p) => a + p.ms, 0);
    const cpu = parts[key].reduce((a, p) => a + p.cpuSeconds, 0);
    return { queries_per_second: round((2 * count) / (ms / 1000), 0), server_cpu_us_per_query: round((cpu * 1e6) / (2 * count), 1), parts_ms: parts[key].map((p) => round(p.ms, 0)) };
  };
  const service = fig('service');
  const forwarded = fig('forwardedCached');
  const base = fig('baseline');
  return {
    bench: 'dns',
    load: { transport: 'UDP, one socket, closed loop', in_flight: inFlight, queries_per_part: count, parts: 'A-B-B-A', machine_load_1m: round(loadavg()[0]) },
    baseline: baseline.name,
    service_name: { name: serviceName, ...service },
    forwarded_cached_name: { name: hostName, ...forwarded },
    baseline_hosts_name: { name: hostName, server: baseline.name, ...base },
    minimal_responder_hosts_name: { name: hostName, ...fig('responder') },
    ratio_service_to_baseline: ratio(service.queries_per_second, base.queries_per_second),
    ratio_forwarded_cached_to_baseline: ratio(forwarded.queries_per_second, base.queries_per_second),
    // The load generator (one Node process on the same cores) bounds queries/s for fast servers;
    // server CPU per query compares the servers themselves (baseline's CPU per query / svc's).
    cpu_efficiency_service_to_baseline: ratio(base.server_cpu_us_per_query, service.server_cpu_us_per_query),
    goal: 'ratio_service_to_baseline >= 0.5',
  };
}
