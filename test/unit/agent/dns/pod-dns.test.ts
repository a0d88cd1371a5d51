/** Pods' DNS settings per dnsPolicy (the kubelet's dns.Configurer rules), the node resolv.conf parser, and upstream's limits with their warnings. */
import test from 'ava';
import type { Pod } from '../../../../agent/api/core-v1';
import { podDnsConfig } from '../../../../agent/dns/pod-dns';
import { parseResolvConf, readHostResolverConfig } from '../../../../agent/dns/resolv-conf';

const host = parseResolvConf('# node\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch old.example\nsearch corp.example. lab.example .\noptions ndots:2 timeout:1\noptions ndots:3 rotate\ndomain ignored.example\n');
const pod = (spec: Partial<Pod['spec']> = {}): Pod => ({ metadata: { name: 'web', namespace: 'prod', uid: 'u-1' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } });
const cluster = { clusterDNS: ['169.254.20.10'], clusterDomain: 'cluster.local', host };

test('resolv.conf: nameservers in order, the last search line (trailing dots trimmed, "." dropped), the last options line', (t) => {
  t.deepEqual(host, { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['ndots:3', 'rotate'] });
});

test('resolvConf "" turns host DNS off as upstream: the local resolver and the search list "."', async (t) => {
  t.deepEqual(await readHostResolverConfig(''), { servers: ['127.0.0.1'], searches: ['.'], options: [] });
});

const table: [string, Partial<Pod['spec']>, object][] = [
  ['ClusterFirst', {}, { servers: ['169.254.20.10'], searches: ['prod.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'], options: ['ndots:5'] }],
  ['ClusterFirst on the host network falls back to Default', { hostNetwork: true }, { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['ndots:3', 'rotate'] }],
  ['ClusterFirstWithHostNet', { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }, { servers: ['169.254.20.10'], searches: ['prod.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'], options: ['ndots:5'] }],
  ['Default', { dnsPolicy: 'Default' }, { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['ndots:3', 'rotate'] }],
  ['None with dnsConfig', { dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '1' }, { name: 'edns0' }] } }, { servers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:1', 'edns0'] }],
  [
    'ClusterFirst with dnsConfig: appended without duplicates, options replace by name',
    { dnsConfig: { nameservers: ['169.254.20.10', '10.0.0.1'], searches: ['cluster.local', 'x.example'], options: [{ name: 'ndots', value: '2' }, { name: 'single-request' }] } },
    { servers: ['169.254.20.10', '10.0.0.1'], searches: ['prod.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example', 'x.example'], options: ['ndots:2', 'single-request'] },
  ],
];

for (const [name, spec, want] of table) {
  test(`dnsPolicy: ${name}`, (t) => {
    const r = podDnsConfig({ ...cluster, pod: pod(spec) });
    t.deepEqual(r.config, want);
    t.deepEqual(r.warnings, []);
  });
}

test('ClusterFirst without clusterDNS: a MissingClusterDNS warning and the host settings', (t) => {
  const r = podDnsConfig({ clusterDNS: [], clusterDomain: 'cluster.local', host, pod: pod() });
  t.deepEqual(r.config?.servers, ['192.0.2.53', '192.0.2.54']);
  t.deepEqual(r.warnings.map((w) => w.reason), ['MissingClusterDNS']);
  t.is(r.warnings[0].message, 'pod: "web_prod(u-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.');
});

test('no cluster DNS at all (svc\'s default: no clusterDNS, no clusterDomain): Default without a warning for every pod', (t) => {
  const r = podDnsConfig({ clusterDNS: [], clusterDomain: '', host, pod: pod() });
  t.deepEqual(r.config?.servers, ['192.0.2.53', '192.0.2.54']);
  t.deepEqual(r.warnings, []);
});

test('no clusterDomain: only the host searches', (t) => {
  t.deepEqual(podDnsConfig({ clusterDNS: ['10.0.0.10'], clusterDomain: '', host, pod: pod() }).config?.searches, ['corp.example', 'lab.example']);
});

test('limits: 3 nameservers, 32 search domains, none over 253 characters, a search line of at most 2048; each cut warned as upstream', (t) => {
  const servers = podDnsConfig({ ...cluster, pod: pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.0.0.1', '1.0.0.2', '1.0.0.3', '1.0.0.4'] } }) });
  t.deepEqual(servers.config?.servers, ['1.0.0.1', '1.0.0.2', '1.0.0.3']);
  t.deepEqual(servers.warnings, [{ reason: 'DNSConfigForming', message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1.0.0.1 1.0.0.2 1.0.0.3' }]);
  const many = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
  const count = podDnsConfig({ ...cluster, pod: pod({ dnsPolicy: 'None', dnsConfig: { searches: many } }) });
  t.is(count.config?.searches?.length, 32);
  t.is(count.warnings[0].reason, 'DNSConfigForming');
  t.true(count.warnings[0].message.startsWith('Search Line limits were exceeded, some search paths have been omitted, the applied search line is: d0.example d1.example'));
  const long = 'a'.repeat(254);
  t.deepEqual(podDnsConfig({ ...cluster, pod: pod({ dnsPolicy: 'None', dnsConfig: { searches: ['ok.example', long] } }) }).config?.searches, ['ok.example']);
  const wide = Array.from({ length: 10 }, (_, i) => `${String(i).padStart(3, '0')}.${'b'.repeat(240)}`);
  const chars = podDnsConfig({ ...cluster, pod: pod({ dnsPolicy: 'None', dnsConfig: { searches: wide } }) });
  t.true(chars.config!.searches!.join(' ').length <= 2048);
  t.is(chars.config?.searches?.length, 8, 'whole domains cut from the end');
  t.is(chars.warnings.length, 1);
});

test('without the host configuration (not read), host-DNS pods are left to the runtime', (t) => {
  t.is(podDnsConfig({ clusterDNS: ['10.0.0.10'], clusterDomain: 'cluster.local', pod: pod({ dnsPolicy: 'Default' }) }).config, undefined);
});
