/** The cluster zone's answers from Services and EndpointSlices: every record kind, NXDOMAIN against NODATA, PTR, and the indexes following changes. */
import test from 'ava';
import { ClusterRecords } from '../../../../agent/dns/cluster-records';
import { ClusterZone } from '../../../../agent/dns/cluster-zone';
import { addressOfReverse, dashed, reverseName } from '../../../../agent/dns/names';
import { notReady, ready, service, slice } from './fixtures';

function zone() {
  let now = 1_700_000_000_000;
  const records = new ClusterRecords('cluster.local', () => now);
  const z = new ClusterZone(records, 'cluster.local');
  records.upsertService(service('default', 'web', { type: 'ClusterIP', clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20', 'fd00::20'], ports: [{ name: 'http', protocol: 'TCP', port: 80 }, { protocol: 'UDP', port: 9 }] }));
  records.upsertService(service('default', 'db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] }));
  records.upsertSlice(
    slice('default', 'db-1', 'db', [
      { addresses: ['10.1.0.5'], conditions: ready, hostname: 'db-0' },
      { addresses: ['10.1.0.6'], conditions: ready },
      { addresses: ['10.1.0.7'], conditions: notReady, hostname: 'db-2' },
    ], [{ name: 'pg', protocol: 'TCP', port: 5432 }]),
  );
  records.upsertService(service('default', 'ext', { type: 'ExternalName', externalName: 'example.test.' }));
  records.upsertService(service('default', 'empty', { clusterIP: 'None' }));
  return { records, z, tick: (ms: number) => (now += ms) };
}

const data = (a: { answers: unknown[] }) => a.answers.map((r) => (r as { data: unknown }).data);

test('names: reverse names and dashed forms of IPv4 and IPv6 addresses round-trip', (t) => {
  t.is(reverseName('10.96.0.20'), '20.0.96.10.in-addr.arpa');
  t.is(reverseName('fd00::20'), '0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa');
  t.is(addressOfReverse(reverseName('fd00::20')!), 'fd00::20');
  t.is(addressOfReverse(reverseName('2001:db8:0:0:1:0:0:1')!), '2001:db8::1:0:0:1');
  t.is(addressOfReverse('1.2.3.in-addr.arpa'), undefined, 'a partial reverse name is no address');
  t.is(addressOfReverse('256.0.0.10.in-addr.arpa'), undefined);
  t.is(dashed('10.1.0.6'), '10-1-0-6');
  t.is(dashed('fd00::6'), 'fd00--6');
});

test('ClusterIP service: A and AAAA of its clusterIPs, case-insensitive, TTL 5; NODATA with the SOA for another type', (t) => {
  const { z } = zone();
  const a = z.answer('Web.Default.svc.cluster.local.', 'A')!;
  t.is(a.rcode, 'NOERROR');
  t.deepEqual(data(a), ['10.96.0.20']);
  t.is((a.answers[0] as { ttl: number }).ttl, 5);
  t.deepEqual(data(z.answer('web.default.svc.cluster.local', 'AAAA')!), ['fd00::20']);
  const mx = z.answer('web.default.svc.cluster.local', 'MX')!;
  t.is(mx.rcode, 'NOERROR');
  t.deepEqual(mx.answers, []);
  t.is(mx.zone, 'cluster.local');
  const soa = z.soa('cluster.local') as { name: string; data: { mname: string; rname: string; refresh: number; retry: number; expire: number; minimum: number; serial: number } };
  t.like(soa.data, { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', refresh: 7200, retry: 1800, expire: 86400, minimum: 5, serial: 1_700_000_000 });
});

test('SRV: named ports only, by port and protocol or all on the service name; the target and its addresses as additionals', (t) => {
  const { z } = zone();
  const srv = z.answer('_http._tcp.web.default.svc.cluster.local', 'SRV')!;
  t.deepEqual(data(srv), [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }]);
  t.deepEqual(srv.additionals.map((r) => [r.type, (r as { data: unknown }).data]), [['A', '10.96.0.20'], ['AAAA', 'fd00::20']]);
  t.is(z.answer('_http._udp.web.default.svc.cluster.local', 'SRV')!.rcode, 'NXDOMAIN', 'no such port and protocol');
  t.is(z.answer('_nope._tcp.web.default.svc.cluster.local', 'SRV')!.rcode, 'NXDOMAIN');
  t.deepEqual(data(z.answer('web.default.svc.cluster.local', 'SRV')!), [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }], 'the unnamed UDP port has no SRV');
  const tcp = z.answer('_tcp.web.default.svc.cluster.local', 'A')!;
  t.is(tcp.rcode, 'NOERROR', 'the _tcp label of a service with a named TCP port exists');
  t.deepEqual(tcp.answers, []);
});

test('headless service: ready endpoint addresses, endpoint names by hostname or dashed address, SRV per endpoint', (t) => {
  const { z } = zone();
  t.deepEqual(data(z.answer('db.default.svc.cluster.local', 'A')!).sort(), ['10.1.0.5', '10.1.0.6'], 'the not-ready endpoint is left out');
  t.deepEqual(data(z.answer('db-0.db.default.svc.cluster.local', 'A')!), ['10.1.0.5']);
  t.deepEqual(data(z.answer('10-1-0-6.db.default.svc.cluster.local', 'A')!), ['10.1.0.6']);
  t.is(z.answer('db-2.db.default.svc.cluster.local', 'A')!.rcode, 'NXDOMAIN', 'not ready: not published');
  const srv = z.answer('_pg._tcp.db.default.svc.cluster.local', 'SRV')!;
  t.deepEqual(
    data(srv).map((d) => (d as { target: string }).target).sort(),
    ['10-1-0-6.db.default.svc.cluster.local', 'db-0.db.default.svc.cluster.local'],
  );
  t.deepEqual(data(srv).map((d) => (d as { port: number; weight: number }).port), [5432, 5432]);
  t.deepEqual(data(srv).map((d) => (d as { weight: number }).weight), [50, 50]);
  t.deepEqual(srv.additionals.map((r) => `${r.name} ${(r as { data: string }).data}`).sort(), ['10-1-0-6.db.default.svc.cluster.local 10.1.0.6', 'db-0.db.default.svc.cluster.local 10.1.0.5']);
  t.is(z.answer('empty.default.svc.cluster.local', 'A')!.rcode, 'NXDOMAIN', 'a headless service without endpoints has no records (CoreDNS)');
});

test('publishNotReadyAddresses publishes not-ready endpoints too', (t) => {
  const { z, records } = zone();
  records.upsertService(service('default', 'db', { clusterIP: 'None', publishNotReadyAddresses: true, ports: [{ name: 'pg', port: 5432 }] }));
  t.deepEqual(data(z.answer('db.default.svc.cluster.local', 'A')!).sort(), ['10.1.0.5', '10.1.0.6', '10.1.0.7']);
  t.deepEqual(data(z.answer('db-2.db.default.svc.cluster.local', 'A')!), ['10.1.0.7']);
});

test('ExternalName: a CNAME to its target, which the server still has to resolve', (t) => {
  const { z } = zone();
  const a = z.answer('ext.default.svc.cluster.local', 'A')!;
  t.deepEqual(a.answers.map((r) => [r.type, (r as { data: string }).data]), [['CNAME', 'example.test']]);
  t.is(a.chase, 'example.test');
  t.is(z.answer('ext.default.svc.cluster.local', 'CNAME')!.chase, undefined);
});

test('NXDOMAIN against NODATA: names that exist with no records of the type are NODATA', (t) => {
  const { z } = zone();
  const rc = (n: string, type = 'A') => z.answer(n, type)!.rcode + (z.answer(n, type)!.answers.length ? '+' : '');
  t.is(rc('cluster.local'), 'NOERROR');
  t.is(rc('cluster.local', 'SOA'), 'NOERROR+');
  t.is(rc('svc.cluster.local'), 'NOERROR');
  t.is(rc('default.svc.cluster.local'), 'NOERROR', 'a namespace with services exists');
  t.is(rc('nope.svc.cluster.local'), 'NXDOMAIN');
  t.is(rc('missing.default.svc.cluster.local'), 'NXDOMAIN');
  t.is(rc('x.y.z.w.default.svc.cluster.local'), 'NXDOMAIN');
  t.is(rc('other.cluster.local'), 'NXDOMAIN');
  t.is(rc('dns-version.cluster.local', 'TXT'), 'NOERROR+');
  t.is(z.answer('example.com', 'A'), undefined, 'not ours: forwarded');
});

test('pod records: the address spelled in the name (pods insecure)', (t) => {
  const { z } = zone();
  t.deepEqual(data(z.answer('10-1-0-9.default.pod.cluster.local', 'A')!), ['10.1.0.9']);
  t.deepEqual(data(z.answer('fd00--9.default.pod.cluster.local', 'AAAA')!), ['fd00::9']);
  t.is(z.answer('not-an-ip.default.pod.cluster.local', 'A')!.rcode, 'NXDOMAIN');
});

test('PTR: ClusterIPs name their service, endpoint addresses their endpoint; unknown addresses are not ours', (t) => {
  const { z } = zone();
  t.deepEqual(data(z.answer(reverseName('10.96.0.20')!, 'PTR')!), ['web.default.svc.cluster.local']);
  t.deepEqual(data(z.answer(reverseName('fd00::20')!, 'PTR')!), ['web.default.svc.cluster.local']);
  t.deepEqual(data(z.answer(reverseName('10.1.0.5')!, 'PTR')!), ['db-0.db.default.svc.cluster.local']);
  t.deepEqual(data(z.answer(reverseName('10.1.0.6')!, 'PTR')!), ['10-1-0-6.db.default.svc.cluster.local']);
  const other = z.answer(reverseName('10.96.0.20')!, 'A')!;
  t.is(other.rcode, 'NOERROR');
  t.is(other.zone, 'in-addr.arpa');
  t.is(z.answer(reverseName('10.1.0.7')!, 'PTR'), undefined, 'a not-ready endpoint has no PTR');
  t.is(z.answer(reverseName('192.0.2.1')!, 'PTR'), undefined);
});

test('changes: deleted services and slices leave no records, the SOA serial follows the last change', (t) => {
  const { z, records, tick } = zone();
  tick(60_000);
  records.deleteService(service('default', 'web', {}));
  t.is(z.answer('web.default.svc.cluster.local', 'A')!.rcode, 'NXDOMAIN');
  t.is(z.answer(reverseName('10.96.0.20')!, 'PTR'), undefined);
  t.is((z.soa('cluster.local') as { data: { serial: number } }).data.serial, 1_700_000_060);
  records.upsertSlice(slice('default', 'db-1', 'db', [{ addresses: ['10.1.0.8'], conditions: ready, hostname: 'db-0' }], [{ name: 'pg', protocol: 'TCP', port: 5432 }]));
  t.deepEqual(data(z.answer('db.default.svc.cluster.local', 'A')!), ['10.1.0.8'], 'an updated slice replaces its endpoints');
  t.is(z.answer(reverseName('10.1.0.5')!, 'PTR'), undefined, 'and their PTRs');
  records.deleteSlice(slice('default', 'db-1', 'db', []));
  t.is(z.answer('db.default.svc.cluster.local', 'A')!.rcode, 'NXDOMAIN');
  for (const name of ['db', 'ext', 'empty']) records.deleteService(service('default', name, {}));
  t.is(z.answer('default.svc.cluster.local', 'A')!.rcode, 'NXDOMAIN', 'a namespace without services is gone');
});
