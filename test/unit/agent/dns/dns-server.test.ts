/**
 * The DNS server end to end in-process on real loopback sockets: cluster answers over UDP and TCP,
 * forwarding to a fake upstream responder with its cache, SERVFAIL when the upstream is silent or
 * failing, the cluster domain never forwarded, truncation of big UDP answers, malformed queries.
 */
import test from 'ava';
import { AnswerCache } from '../../../../agent/dns/answer-cache';
import { ClusterRecords } from '../../../../agent/dns/cluster-records';
import { ClusterZone } from '../../../../agent/dns/cluster-zone';
import { DnsServer } from '../../../../agent/dns/dns-server';
import { Forwarder } from '../../../../agent/dns/forwarder';
import { QueryHandler } from '../../../../agent/dns/query-handler';
import { WireCache } from '../../../../agent/dns/wire-cache';
import { DnsResponder, queryTcp, queryUdp } from '../../../helpers/dns-responder';
import { ready, service, slice } from './fixtures';
import dgram from 'node:dgram';

const silentLog = { warn: () => {}, info: () => {} };

async function setup(t: { teardown(fn: () => unknown): void }, opts: { timeoutMs?: number; maxConcurrent?: number } = {}) {
  const upstream = new DnsResponder({ hosts: { 'example.test': ['192.0.2.10'], 'big.test': ['192.0.2.11'] }, ttl: 300, truncate: ['big.test'] });
  const upPort = await upstream.start();
  let now = 1_700_000_000_000;
  const records = new ClusterRecords('cluster.local', () => now);
  records.upsertService(service('default', 'web', { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] }));
  records.upsertService(service('default', 'many', { clusterIP: 'None', ports: [{ name: 'p', port: 1 }] }));
  const eps = Array.from({ length: 100 }, (_, i) => ({ addresses: [`10.2.${i >> 8}.${i & 255}`], conditions: ready }));
  records.upsertSlice(slice('default', 'many-1', 'many', eps, [{ name: 'p', protocol: 'TCP', port: 1 }]));
  records.upsertService(service('default', 'ext', { type: 'ExternalName', externalName: 'example.test' }));
  const forwarder = new Forwarder({ upstreams: [{ address: '127.0.0.1', port: upPort }], timeoutMs: opts.timeoutMs ?? 2000, maxConcurrent: opts.maxConcurrent });
  const cache = new AnswerCache({ maxEntries: 100, maxSuccessTtl: 30, maxDenialTtl: 5 }, () => now);
  const handler = new QueryHandler(new ClusterZone(records, 'cluster.local'), forwarder, cache);
  const server = new DnsServer({ address: '127.0.0.1', port: 0, handler, log: silentLog, wireCache: new WireCache(() => records.generation) });
  const ac = new AbortController();
  const running = server.run(ac.signal);
  const { port } = await server.listening();
  t.teardown(async () => {
    ac.abort();
    await running;
    await upstream.stop();
  });
  return { port, upstream, forwarder, server, handler, records, tick: (ms: number) => (now += ms) };
}

const datas = (r: { answers?: unknown[] }) => (r.answers ?? []).map((a) => (a as { data: unknown }).data);

test('cluster names over UDP: authoritative, RA set, NXDOMAIN with the SOA in authority; never forwarded', async (t) => {
  const { port, upstream } = await setup(t);
  const a = await queryUdp(port, 'web.default.svc.cluster.local', 'A');
  t.is(a.rcode, 'NOERROR');
  t.true(a.flag_aa);
  t.true(a.flag_ra);
  t.deepEqual(datas(a), ['10.96.0.20']);
  const nx = await queryUdp(port, 'nope.default.svc.cluster.local', 'A');
  t.is(nx.rcode, 'NXDOMAIN');
  t.deepEqual(nx.authorities?.map((r) => r.type), ['SOA']);
  const nodata = await queryUdp(port, 'web.default.svc.cluster.local', 'TXT');
  t.is(nodata.rcode, 'NOERROR');
  t.is(nodata.answers?.length, 0);
  t.deepEqual(nodata.authorities?.map((r) => r.type), ['SOA']);
  t.is(upstream.queries, 0, 'nothing in the cluster domain reached the upstream');
});

test('forwarded names: answered by the upstream once, then from the cache with aged TTLs capped at 30 s; negative answers cached 5 s', async (t) => {
  const { port, upstream, tick } = await setup(t);
  const first = await queryUdp(port, 'example.test', 'A');
  t.is(first.rcode, 'NOERROR');
  t.false(first.flag_aa);
  t.deepEqual(datas(first), ['192.0.2.10']);
  t.is((first.answers![0] as { ttl: number }).ttl, 300, 'the first answer passes the upstream TTL through');
  tick(10_000);
  const second = await queryUdp(port, 'EXAMPLE.test', 'A');
  t.deepEqual(datas(second), ['192.0.2.10']);
  t.is((second.answers![0] as { ttl: number }).ttl, 290, 'aged by the time in the cache');
  t.is(upstream.queries, 1, 'the second query came from the cache');
  tick(21_000);
  await queryUdp(port, 'example.test', 'A');
  t.is(upstream.queries, 2, 'expired after the 30 s cap');
  const nx = await queryUdp(port, 'missing.test', 'A');
  t.is(nx.rcode, 'NXDOMAIN');
  await queryUdp(port, 'missing.test', 'A');
  t.is(upstream.queries, 3, 'NXDOMAIN cached');
  tick(5_000);
  await queryUdp(port, 'missing.test', 'A');
  t.is(upstream.queries, 4, 'for at most 5 s');
});

test('upstream failures: a silent upstream or SERVFAIL gives a clear SERVFAIL, not cached', async (t) => {
  const { port, upstream } = await setup(t, { timeoutMs: 200 });
  upstream.mode = 'silent';
  const r = await queryUdp(port, 'example.test', 'A');
  t.is(r.rcode, 'SERVFAIL');
  upstream.mode = 'servfail';
  t.is((await queryUdp(port, 'other.test', 'A')).rcode, 'SERVFAIL');
  upstream.mode = 'answer';
  t.deepEqual(datas(await queryUdp(port, 'other.test', 'A')), [], 'the SERVFAIL was not cached: asked again');
  t.is(upstream.asked.filter((n) => n === 'other.test').length, 2);
});

test('an upstream answer with TC is fetched again over TCP', async (t) => {
  const { port, upstream } = await setup(t);
  const r = await queryUdp(port, 'big.test', 'A');
  t.deepEqual(datas(r), ['192.0.2.11']);
  t.is(upstream.queries, 2, 'UDP then TCP');
});

test('ExternalName answers carry the CNAME and the target resolved upstream', async (t) => {
  const { port } = await setup(t);
  const r = await queryUdp(port, 'ext.default.svc.cluster.local', 'A');
  t.deepEqual(r.answers?.map((a) => [a.type, (a as { data: string }).data]), [['CNAME', 'example.test'], ['A', '192.0.2.10']]);
});

test('big UDP answers are truncated (TC, no records) and answered whole over TCP, several queries on one connection', async (t) => {
  const { port, server } = await setup(t);
  const udp = await queryUdp(port, 'many.default.svc.cluster.local', 'A');
  t.true(udp.flag_tc);
  t.is(udp.answers?.length, 0);
  t.is(server.truncated, 1);
  const edns = await queryUdp(port, 'many.default.svc.cluster.local', 'A', { edns: 4096 });
  t.true(edns.flag_tc, '100 addresses do not fit 1232 bytes either');
  const [tcp, web, srv] = await queryTcp(port, [
    { name: 'many.default.svc.cluster.local', type: 'A' },
    { name: 'web.default.svc.cluster.local', type: 'A' },
    { name: '_http._tcp.web.default.svc.cluster.local', type: 'SRV' },
  ]);
  t.false(tcp.flag_tc);
  t.is(tcp.answers?.length, 100);
  t.deepEqual(datas(web), ['10.96.0.20']);
  t.deepEqual(datas(srv), [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }]);
});

test('malformed and unsupported queries: FORMERR for garbage with a header, NOTIMP for other opcodes, FORMERR for two questions', async (t) => {
  const { port, handler } = await setup(t);
  const sock = dgram.createSocket('udp4');
  t.teardown(() => sock.close());
  const got = new Promise<Buffer>((resolve) => sock.once('message', resolve));
  const garbage = Buffer.alloc(14, 0xff);
  garbage.writeUInt16BE(0x1234, 0);
  garbage.writeUInt16BE(0x0100, 2);
  sock.send(garbage, port, '127.0.0.1');
  const reply = await got;
  t.is(reply.readUInt16BE(0), 0x1234);
  t.is(reply.readUInt16BE(2) & 0xf, 1, 'FORMERR');
  t.true((reply.readUInt16BE(2) & 0x8000) !== 0, 'a response');
  const q = { id: 7, type: 'query' as const, flags: 0, flag_qr: false, flag_aa: false, flag_tc: false, flag_rd: true, flag_ra: false, flag_z: false, flag_ad: false, flag_cd: false, rcode: 'NOERROR' };
  const notify = await handler.handle({ ...q, opcode: 'NOTIFY', questions: [{ name: 'a', type: 'A' }] });
  t.is((notify.flags ?? 0) & 0xf, 4, 'NOTIMP');
  const two = await handler.handle({ ...q, opcode: 'QUERY', questions: [{ name: 'a', type: 'A' }, { name: 'b', type: 'A' }] });
  t.is((two.flags ?? 0) & 0xf, 1, 'FORMERR');
});

test('at most maxConcurrent questions upstream at once: the next distinct one is REFUSED at once; the same question joins the one in flight', async (t) => {
  const { port, upstream, handler } = await setup(t, { timeoutMs: 2000, maxConcurrent: 2 });
  upstream.mode = 'silent';
  const a = queryUdp(port, 'a.test', 'A');
  const b = queryUdp(port, 'b.test', 'A');
  const a2 = queryUdp(port, 'a.test', 'A');
  // Both distinct questions reached the upstream before the third name is asked.
  for (let i = 0; i < 200 && upstream.queries < 2; i++) await new Promise((r) => setTimeout(r, 10));
  t.is(upstream.queries, 2);
  const c = await queryUdp(port, 'c.test', 'A');
  t.is(c.rcode, 'REFUSED');
  t.is(handler.counters.refused, 1);
  upstream.mode = 'answer';
  const answers = await Promise.all([a, b, a2]);
  t.deepEqual(answers.map((r) => r.rcode), ['SERVFAIL', 'SERVFAIL', 'SERVFAIL'], 'the silent upstream timed out for the waiting ones');
  t.is(upstream.asked.filter((n) => n === 'a.test').length, 1, 'the repeated question shared the first');
});

test('wire cache: a repeated cluster query is answered from the encoded bytes with its own id until the records change; forwarded and ExternalName answers are never copied', async (t) => {
  const { port, server, records } = await setup(t);
  const first = await queryUdp(port, 'web.default.svc.cluster.local', 'A');
  const second = await queryUdp(port, 'web.default.svc.cluster.local', 'A');
  t.is(server.wireHits, 1);
  t.not(second.id, undefined);
  t.deepEqual(datas(second), datas(first));
  t.deepEqual(datas(await queryUdp(port, 'WEB.default.svc.cluster.local', 'A')), ['10.96.0.20'], 'another spelling is another entry');
  t.is(server.wireHits, 1);
  records.upsertService(service('default', 'web', { clusterIP: '10.96.0.21', ports: [{ name: 'http', port: 80 }] }));
  t.deepEqual(datas(await queryUdp(port, 'web.default.svc.cluster.local', 'A')), ['10.96.0.21'], 'a change drops the copies');
  t.is(server.wireHits, 1);
  await queryUdp(port, 'example.test', 'A');
  await queryUdp(port, 'example.test', 'A');
  await queryUdp(port, 'ext.default.svc.cluster.local', 'A');
  await queryUdp(port, 'ext.default.svc.cluster.local', 'A');
  t.is(server.wireHits, 1, 'forwarded and ExternalName answers are computed each time');
});
