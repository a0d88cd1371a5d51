/**
 * A child process of the dns bench: `--mode=svc` runs svc-node's cluster DNS server code
 * (QueryHandler, DnsServer, forwarder and cache of agent/dns) with its records fed directly
 * (`--services` ClusterIP Services with one EndpointSlice each; the informers are not under test),
 * forwarding to `--upstream-port` on loopback; `--mode=responder` runs the minimal dns-packet
 * responder of test/helpers answering `--hosts-file`-style names. Prints "listening <port>".
 */
import { readFileSync } from 'node:fs';
import { AnswerCache, DEFAULT_CACHE_LIMITS } from '../agent/dns/answer-cache';
import { ClusterRecords } from '../agent/dns/cluster-records';
import { ClusterZone } from '../agent/dns/cluster-zone';
import { DnsServer } from '../agent/dns/dns-server';
import { Forwarder } from '../agent/dns/forwarder';
import { QueryHandler } from '../agent/dns/query-handler';
import { WireCache } from '../agent/dns/wire-cache';
import { DnsResponder } from '../test/helpers/dns-responder';

const arg = (name: string, def = '') => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;

async function main(): Promise<void> {
  const ac = new AbortController();
  process.once('SIGTERM', () => ac.abort());
  if (arg('mode') === 'responder') {
    const hosts: Record<string, string[]> = {};
    for (const line of readFileSync(arg('hosts-file'), 'utf8').split('\n')) {
      const [ip, ...names] = line.trim().split(/\s+/);
      for (const n of names) (hosts[n.toLowerCase()] ??= []).push(ip);
    }
    const r = new DnsResponder({ hosts, ttl: 300 });
    process.stdout.write(`listening ${await r.start()}\n`);
    await new Promise((resolve) => ac.signal.addEventListener('abort', resolve));
    await r.stop();
    return;
  }
  const records = new ClusterRecords('cluster.local');
  const n = Number(arg('services', '1000'));
  for (let i = 0; i < n; i++) {
    const ip = `10.96.${i >> 8}.${i & 255}`;
    records.upsertService({ metadata: { namespace: 'default', name: `svc-${i}` }, spec: { clusterIP: ip, clusterIPs: [ip], ports: [{ name: 'http', port: 80 }] } });
    records.upsertSlice({
      metadata: { namespace: 'default', name: `svc-${i}-x`, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [`10.244.${i >> 8}.${i & 255}`], conditions: { ready: true } }],
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    });
  }
  const forwarder = new Forwarder({ upstreams: [{ address: '127.0.0.1', port: Number(arg('upstream-port', '53')) }], timeoutMs: 2000 });
  const handler = new QueryHandler(new ClusterZone(records, 'cluster.local'), forwarder, new AnswerCache(DEFAULT_CACHE_LIMITS));
  const log = { info: () => {}, warn: (o: object, m: string) => process.stderr.write(`${m} ${JSON.stringify(o)}\n`) };
  const server = new DnsServer({ address: '127.0.0.1', port: 0, handler, log, wireCache: new WireCache(() => records.generation) });
  const running = server.run(ac.signal);
  process.stdout.write(`listening ${(await server.listening()).port}\n`);
  await running;
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
