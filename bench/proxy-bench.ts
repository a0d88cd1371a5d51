/**
 * `npm run bench -- proxy` (issue 24 item 3): svc-node's network proxy.
 *
 * 1. Sync time and CPU for 1,000 Services × 10 endpoints: a real svc-apiserver holds them, the
 *    real Proxier follows it and applies its table with the real nft inside a network namespace
 *    of the bench's own. Full sync: the Proxier's first sync (its observer's duration), plus three
 *    more full syncs of the same data through the same functions, with the agent's CPU
 *    (generate) and nft's CPU (bash `times` of its child) apart. Incremental: one endpoint of one
 *    slice changed through the API, five times; the Proxier's sync duration each time, and the
 *    same measured directly (diff + nft). Baseline in the same run: one nft invocation applying a
 *    one-line script (the floor of any sync). Goals: full < 1 s, incremental < 50 ms.
 * 2. Request throughput through a cluster IP against the same endpoint addressed directly, from a
 *    client namespace into an endpoint namespace (veth pair; netns.ts), alternating, with
 *    keep-alive connections and with a new connection per request. Goal: ratio ≥ 0.9.
 */
import { spawn } from 'node:child_process';
import { loadKubeconfig } from '../agent/client/kubeconfig';
import { HttpApiClient } from '../agent/client/http-api-client';
import { runCommand, systemTool } from '../agent/proxy/nft-exec';
import type { NftTable } from '../agent/proxy/nft-model';
import { renderDiff, renderFull } from '../agent/proxy/nft-render';
import { FragmentCache, buildTable } from '../agent/proxy/nft-rules';
import { NftWriter } from '../agent/proxy/nft-writer';
import { Proxier, endpointSlicesResource, servicesResource, type NftRunner } from '../agent/proxy/proxier';
import { PortsMemo, servicePortsOf } from '../agent/proxy/service-ports';
import { realClock } from '../agent/platform/clock';
import type { KObject } from '../apiserver/api/types';
import { startApiServer } from '../test/helpers/apiserver-process';
import { makeTopology, type Topology } from '../test/e2e/proxy/netns';
import type { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';
import { median, ratio, round } from './lib/stats';

const SERVICES = 1000;
const ENDPOINTS = 10;
const RULES = { clusterCIDRs: [], masqueradeAll: false };

/** Runs nft in the namespace through bash, whose `times` reports the child's CPU. */
class TimedNft implements NftRunner {
  readonly cpu: number[] = [];
  constructor(private readonly ns: string) {}
  async apply(script: string): Promise<void> {
    const r = await runCommand('ip', ['netns', 'exec', this.ns, 'bash', '-c', `${systemTool('nft')} -f -; rc=$?; times >&2; exit $rc`], script);
    const lines = r.stderr.trim().split('\n');
    if (r.code !== 0) throw new Error(`nft failed: ${lines.slice(0, 4).join(' ')}`);
    // times: shell user/sys, then children user/sys ("0m0.120s 0m0.030s").
    const secs = (lines.at(-1) ?? '').split(/\s+/).map((x) => /(\d+)m([\d.]+)s/.exec(x)).map((m) => (m ? Number(m[1]) * 60 + Number(m[2]) : 0));
    this.cpu.push(secs.reduce((a, b) => a + b, 0));
  }
}

function service(i: number): KObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}`, namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } };
}
function endpointSlice(name: string, svc: string, ips: string[], port: number): KObject {
  return {
    apiVersion: 'discovery.svc.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'http', port, protocol: 'TCP' }],
  };
}
const ipsOf = (i: number, shift = 0) => Array.from({ length: ENDPOINTS }, (_, k) => `10.${200 + Math.floor(i / 250)}.${i % 250}.${k + 1 + shift}`);

async function inBatches<T>(items: T[], n: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += n) await Promise.all(items.slice(i, i + n).map(fn));
}

/** A closed-loop HTTP client run inside the client namespace: requests completed in durationMs. */
const LOADGEN = `const [url,ms,conc,ka]=process.argv.slice(1);const http=require('http');const agent=new http.Agent({keepAlive:ka==='1',maxSockets:Number(conc)});let n=0,e=0;const end=Date.now()+Number(ms);
function one(){if(Date.now()>=end)return Promise.resolve();return new Promise((r)=>{const q=http.get(url,{agent},(s)=>{s.resume();s.on('end',()=>{n++;r()})});q.on('error',()=>{e++;r()})}).then(one)}
Promise.all(Array.from({length:Number(conc)},one)).then(()=>{process.stdout.write(JSON.stringify({requests:n,errors:e,seconds:Number(ms)/1000}));process.exit(0)});`;

function load(net: Topology, url: string, ms: number, keepAlive: boolean): Promise<{ requests: number; errors: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn('ip', ['netns', 'exec', net.clientNs, process.execPath, '-e', LOADGEN, url, String(ms), '16', keepAlive ? '1' : '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { requests: number; errors: number; seconds: number }) : reject(new Error(`load exited ${code}: ${err}`))));
  });
}

/** Waits for the observer's next sync after `before` syncs (bounded by attempts of 10 ms). */
async function nextSync(proxier: Proxier, before: number): Promise<void> {
  for (let i = 0; i < 3000 && proxier.syncCount() <= before; i++) await new Promise((r) => setTimeout(r, 10));
  if (proxier.syncCount() <= before) throw new Error('the proxy did not sync');
}

export async function runProxyBench(_args: readonly string[], cleanup: Cleanup): Promise<object> {
  const net = makeTopology(`b${process.pid % 100000}`, 200);
  cleanup.add('network namespaces', () => net.destroy());
  await net.serve(net.endpointIPs[0], 8080, 'ok');
  const api = await startApiServer();
  cleanup.add('svc-apiserver', () => api.stop().then(() => undefined));
  const client = new HttpApiClient(await loadKubeconfig(api.kubeconfig), { timeoutMs: 30_000, userAgent: 'proxy-bench' });
  cleanup.add('client', () => client.close());

  progress(`creating ${SERVICES} Services × ${ENDPOINTS} endpoints`);
  const idx = Array.from({ length: SERVICES }, (_, i) => i);
  await inBatches(idx, 25, (i) => client.create(servicesResource, service(i)));
  await inBatches(idx, 25, (i) => client.create(endpointSlicesResource, endpointSlice(`s${i}-a`, `s${i}`, ipsOf(i), 8080)));
  const webObject: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } };
  const web = await client.create(servicesResource, webObject);
  await client.create(endpointSlicesResource, endpointSlice('web-a', 'web', [net.endpointIPs[0]], 8080));

  const nft = new TimedNft(net.clientNs);
  const syncs: { seconds: number; full: boolean }[] = [];
  const proxier = new Proxier({ client, nodeName: 'n1', clock: realClock, log: { debug: () => undefined, info: () => undefined, warn: (o, m) => progress(`${m} ${JSON.stringify(o)}`), error: (o, m) => progress(`${m} ${JSON.stringify(o)}`) }, writer: new NftWriter(nft, ['ip'], RULES), minSyncPeriodMs: 100, observer: { synced: (seconds, full) => void syncs.push({ seconds, full }) } });
  const stop = new AbortController();
  const running = proxier.run(stop.signal);
  cleanup.add('proxy', async () => {
    stop.abort();
    await running;
  });
  await nextSync(proxier, 0);
  progress(`first (full) sync: ${round(syncs[0].seconds, 3)} s`);

  // Incremental: one endpoint of one slice changes through the API.
  const slice0 = await client.get(endpointSlicesResource, 's0-a', { namespace: 'default' });
  let current = slice0;
  for (let k = 0; k < 5; k++) {
    const before = proxier.syncCount();
    const eps = endpointSlice('s0-a', 's0', ipsOf(0, k % 2 === 0 ? 100 : 0), 8080).endpoints;
    current = await client.update(endpointSlicesResource, { ...current, endpoints: eps });
    await nextSync(proxier, before);
  }
  const proxierFull = syncs.filter((s) => s.full).map((s) => s.seconds);
  const proxierIncr = syncs.filter((s) => !s.full).map((s) => s.seconds);

  // The same work measured directly, with CPU: generate (this process) and nft (its child).
  const services = await client.list(servicesResource);
  const slices = await client.list(endpointSlicesResource);
  const direct = await directSyncs(nft, services.items, slices.items);

  progress('throughput: direct vs cluster IP');
  const clusterUrl = `http://${(web.spec as { clusterIP: string }).clusterIP}:80/`;
  const directUrl = `http://${net.endpointIPs[0]}:8080/`;
  const tput: Record<string, { direct: number[]; cluster: number[] }> = { keepalive: { direct: [], cluster: [] }, new_connection: { direct: [], cluster: [] } };
  for (let round_ = 0; round_ < 3; round_++) {
    for (const [mode, ka] of [['keepalive', true], ['new_connection', false]] as const) {
      for (const [which, url] of [['direct', directUrl], ['cluster', clusterUrl]] as const) {
        const r = await load(net, url, 3000, ka);
        if (r.errors > 0) progress(`${mode} ${which}: ${r.errors} errors`);
        tput[mode][which].push(r.requests / r.seconds);
      }
    }
  }
  const tp = (mode: string) => ({ direct_rps: round(median(tput[mode].direct), 0), cluster_ip_rps: round(median(tput[mode].cluster), 0), ratio: ratio(median(tput[mode].cluster), median(tput[mode].direct)), goal_ratio: 0.9 });
  return {
    services: SERVICES,
    endpoints_per_service: ENDPOINTS,
    full_sync: { proxier_first_sync_s: round(proxierFull[0], 3), ...direct.full, goal_s: 1 },
    incremental_sync: { proxier_median_s: round(median(proxierIncr), 4), proxier_samples_s: proxierIncr.map((x) => round(x, 4)), ...direct.incremental, goal_s: 0.05 },
    baseline_nft_invocation: direct.floor,
    throughput: { keepalive: tp('keepalive'), new_connection: tp('new_connection') },
  };
}

async function directSyncs(nft: TimedNft, services: KObject[], slices: KObject[]) {
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  // Full: everything generated and applied again (what a start or a failed sync costs).
  const full = { wall: [] as number[], agentCpu: [] as number[], nftCpu: [] as number[], bytes: 0 };
  let table: NftTable | undefined;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    const c0 = cpuNow();
    table = buildTable('ip', servicePortsOf(services, slices, 'n1'), RULES);
    const script = renderFull(table);
    full.agentCpu.push(cpuNow() - c0);
    await nft.apply(script);
    full.wall.push((performance.now() - t0) / 1000);
    full.nftCpu.push(nft.cpu.at(-1)!);
    full.bytes = script.length;
  }
  // Incremental as the Proxier does it: unchanged objects keep their ports and fragments.
  const memo = new PortsMemo();
  const cache = new FragmentCache();
  let current = slices;
  table = buildTable('ip', servicePortsOf(services, current, 'n1', memo), RULES, cache);
  await nft.apply(renderFull(table));
  const incr = { wall: [] as number[], agentCpu: [] as number[], nftCpu: [] as number[] };
  const target = slices.find((s) => s.metadata.name === 's1-a')!;
  for (let k = 0; k < 5; k++) {
    const changed = { ...target, endpoints: endpointSlice('s1-a', 's1', ipsOf(1, k % 2 === 0 ? 100 : 0), 8080).endpoints };
    const t0 = performance.now();
    const c0 = cpuNow();
    current = current.map((s) => (s.metadata.name === target.metadata.name ? changed : s));
    const next = buildTable('ip', servicePortsOf(services, current, 'n1', memo), RULES, cache);
    const script = renderDiff(table, next)!;
    incr.agentCpu.push(cpuNow() - c0);
    await nft.apply(script);
    incr.wall.push((performance.now() - t0) / 1000);
    incr.nftCpu.push(nft.cpu.at(-1)!);
    table = next;
  }
  const floor: number[] = [];
  const floorCpu: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    await nft.apply('add table ip svc-bench-floor\n');
    floor.push((performance.now() - t0) / 1000);
    floorCpu.push(nft.cpu.at(-1)!);
  }
  await nft.apply('delete table ip svc-bench-floor\n');
  const m = (xs: number[], d = 4) => round(median(xs), d);
  return {
    full: { direct_median_s: m(full.wall, 3), agent_cpu_s: m(full.agentCpu, 3), nft_cpu_s: m(full.nftCpu, 3), script_bytes: full.bytes },
    incremental: { direct_median_s: m(incr.wall), agent_cpu_s: m(incr.agentCpu), nft_cpu_s: m(incr.nftCpu) },
    floor: { median_s: m(floor), nft_cpu_s: m(floorCpu) },
  };
}
