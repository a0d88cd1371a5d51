/** The table built from Service ports: upstream kube-proxy's nftables structure and behaviour. */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { Family, NftTable } from '../../../../agent/proxy/nft-model';
import { buildTable, shortHash, type RuleOptions } from '../../../../agent/proxy/nft-rules';
import { servicePortsOf } from '../../../../agent/proxy/service-ports';
import { service, slice, web, webPorts, type EpSpec } from './fixtures';

const noMasq: RuleOptions = { clusterCIDRs: [], masqueradeAll: false };
function table(services: KObject[], slices: KObject[], o: RuleOptions = noMasq, family: Family = 'ip', node = 'n1'): NftTable {
  return buildTable(family, servicePortsOf(services, slices, node), o);
}
/** The one chain whose name starts with prefix and ends with suffix. */
function chain(t: NftTable, prefix: string, suffix = ''): { name: string; rules: string[] } {
  const names = chainsOf(t, prefix).filter((n) => n.endsWith(suffix));
  if (names.length !== 1) throw new Error(`${names.length} chains ${prefix}-*${suffix}: ${[...t.chains.keys()].join(' ')}`);
  return { name: names[0], rules: t.chains.get(names[0])!.rules };
}
/** The per-Service chains of a kind (prefix, 8-character hash, readable part). */
function chainsOf(t: NftTable, prefix: string): string[] {
  return [...t.chains.keys()].filter((n) => new RegExp(`^${prefix}-[A-Z2-7]{8}-`).test(n));
}
const el = (t: NftTable, set: string) => Object.fromEntries(t.sets.get(set)!.elements);
const webSlice = (eps: EpSpec[]) => slice('web-a', 'web', eps, webPorts);

test('the base chains hook nat and filter as upstream, and the lookups are verdict maps', (t) => {
  const tb = table([], []);
  t.is(tb.chains.get('nat-prerouting')!.base, 'type nat hook prerouting priority -100 ;');
  t.is(tb.chains.get('nat-output')!.base, 'type nat hook output priority -100 ;');
  t.is(tb.chains.get('nat-postrouting')!.base, 'type nat hook postrouting priority 100 ;');
  t.is(tb.chains.get('filter-output')!.base, 'type filter hook output priority -110 ;');
  t.deepEqual(tb.chains.get('services')!.rules, ['ip daddr . meta l4proto . th dport vmap @service-ips', 'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports']);
  t.deepEqual(tb.chains.get('masquerading')!.rules, ['ct status dnat ip saddr . ip daddr @hairpin jump mark-for-masquerade', 'meta mark & 0x4000 == 0 return', 'meta mark set meta mark xor 0x4000', 'masquerade fully-random']);
  t.is(tb.sets.get('service-ips')!.spec, 'type ipv4_addr . inet_proto . inet_service : verdict ;');
  t.is(tb.sets.get('hairpin')!.spec, 'type ipv4_addr . ipv4_addr ;');
});

test('a cluster IP with ready endpoints: the map sends it to the service chain, which picks one at random and DNATs; each endpoint hairpin-masqueraded', (t) => {
  const tb = table([web()], [webSlice([{ ip: '10.244.0.5' }, { ip: '10.244.1.5' }, { ip: '10.244.2.5', ready: false }])]);
  const svc = chain(tb, 'service', 'default/web/tcp/http');
  t.deepEqual(el(tb, 'service-ips'), { '10.96.0.10 . tcp . 80': `goto ${svc.name}` });
  t.deepEqual(el(tb, 'cluster-ips'), { '10.96.0.10': '' });
  t.deepEqual(el(tb, 'no-endpoint-services'), {});
  t.deepEqual(svc.rules, ['meta l4proto tcp numgen random mod 2 0 dnat to 10.244.0.5:8080', 'meta l4proto tcp dnat to 10.244.1.5:8080']);
  t.deepEqual(el(tb, 'hairpin'), { '10.244.0.5 . 10.244.0.5': '', '10.244.1.5 . 10.244.1.5': '' }, 'not the unready endpoint');
  t.deepEqual(chainsOf(tb, 'endpoint'), [], 'without affinity no endpoint has a chain of its own');
});

test('one endpoint is a plain DNAT; names carry an 8-character hash of the readable part, as upstream', (t) => {
  const tb = table([web()], [webSlice([{ ip: '10.244.0.5' }])]);
  const svc = chain(tb, 'service', 'default/web/tcp/http');
  t.is(svc.name, `service-${shortHash('default/web/tcp/http')}-default/web/tcp/http`);
  t.regex(shortHash('x'), /^[A-Z2-7]{8}$/);
  t.deepEqual(svc.rules, ['meta l4proto tcp dnat to 10.244.0.5:8080']);
});

test('no endpoints: rejected through no-endpoint-services, no service chain; the cluster IP stays in cluster-ips', (t) => {
  const tb = table([web()], [webSlice([{ ip: '10.244.0.5', ready: false }])]);
  t.deepEqual(el(tb, 'no-endpoint-services'), { '10.96.0.10 . tcp . 80': 'goto reject-chain' });
  t.deepEqual(el(tb, 'service-ips'), {});
  t.deepEqual(chainsOf(tb, 'service'), []);
  t.deepEqual(tb.chains.get('reject-chain')!.rules, ['reject']);
  t.deepEqual(el(tb, 'cluster-ips'), { '10.96.0.10': '' });
});

test('serving-and-terminating endpoints are used when none is ready', (t) => {
  const tb = table([web()], [webSlice([{ ip: '10.244.0.5', ready: false, serving: true, terminating: true }, { ip: '10.244.0.6', ready: false }])]);
  t.deepEqual(chain(tb, 'service').rules, ['meta l4proto tcp dnat to 10.244.0.5:8080']);
  t.deepEqual(Object.keys(el(tb, 'hairpin')), ['10.244.0.5 . 10.244.0.5']);
});

test('masquerade: off-cluster sources with clusterCIDR, every source with masqueradeAll, none otherwise', (t) => {
  const eps = [webSlice([{ ip: '10.244.0.5' }])];
  const rule = (o: RuleOptions) => chain(table([web()], eps, o), 'service').rules.filter((r) => r.includes('mark-for-masquerade'));
  t.deepEqual(rule({ clusterCIDRs: ['10.244.0.0/16', 'fd00::/64'], masqueradeAll: false }), ['ip daddr 10.96.0.10 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade']);
  t.deepEqual(rule({ clusterCIDRs: ['10.244.0.0/16'], masqueradeAll: true }), ['ip daddr 10.96.0.10 tcp dport 80 jump mark-for-masquerade']);
  t.deepEqual(rule(noMasq), []);
});

test('ClientIP affinity: a dynamic set per endpoint with the timeout, checked before the random pick and refreshed by the endpoint chain, which DNATs', (t) => {
  const tb = table([web({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } })], [webSlice([{ ip: '10.244.0.5' }, { ip: '10.244.1.5' }])]);
  const sets = [...tb.sets.entries()].filter(([n]) => n.startsWith('affinity-'));
  t.is(sets.length, 2);
  for (const [, s] of sets) t.like(s, { kind: 'set', dynamic: true, spec: 'type ipv4_addr ; flags dynamic,timeout ; timeout 600s ;' });
  const svc = chain(tb, 'service');
  const ep = chain(tb, 'endpoint', '__10.244.0.5/8080');
  const aff = sets.find(([n]) => n.endsWith('__10.244.0.5/8080'))![0];
  t.is(svc.rules[0], `ip saddr @${aff} goto ${ep.name}`);
  t.deepEqual(svc.rules.slice(2), [`numgen random mod 2 0 goto ${ep.name}`, `goto ${chain(tb, 'endpoint', '__10.244.1.5/8080').name}`]);
  t.deepEqual(ep.rules, [`update @${aff} { ip saddr }`, 'meta l4proto tcp dnat to 10.244.0.5:8080']);
  t.deepEqual(Object.keys(el(tb, 'hairpin')), ['10.244.0.5 . 10.244.0.5', '10.244.1.5 . 10.244.1.5'], 'hairpin as without affinity');
});

test('internalTrafficPolicy Local: cluster traffic to the node\'s endpoints only; dropped when it has none but others exist', (t) => {
  const svc = web({ internalTrafficPolicy: 'Local' });
  const tb = table([svc], [webSlice([{ ip: '10.244.0.5', node: 'n1' }, { ip: '10.244.1.5', node: 'n2' }])]);
  const local = chain(tb, 'local');
  t.deepEqual(el(tb, 'service-ips'), { '10.96.0.10 . tcp . 80': `goto ${local.name}` });
  t.deepEqual(local.rules, ['meta l4proto tcp dnat to 10.244.0.5:8080']);
  const none = table([svc], [webSlice([{ ip: '10.244.1.5', node: 'n2' }])]);
  t.deepEqual(el(none, 'no-endpoint-services'), { '10.96.0.10 . tcp . 80': 'drop' });
  t.deepEqual(el(none, 'service-ips'), {});
});

test('NodePort, Cluster policy: the node port goes to the external chain, which masquerades and goes to the service chain', (t) => {
  const svc = service('np', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ port: 80, nodePort: 30080 }] });
  const tb = table([svc], [slice('np-a', 'np', [{ ip: '10.244.0.5' }], [{ port: 8080 }])]);
  const ext = chain(tb, 'external');
  t.deepEqual(el(tb, 'service-nodeports'), { 'tcp . 30080': `goto ${ext.name}` });
  t.deepEqual(ext.rules, ['jump mark-for-masquerade', `goto ${chain(tb, 'service').name}`]);
  t.deepEqual(el(tb, 'no-endpoint-nodeports'), {});
});

test('NodePort, Local policy: external traffic to local endpoints with its source kept; the node\'s own traffic may use any endpoint, masqueraded', (t) => {
  const svc = service('np', { type: 'NodePort', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080 }] });
  const tb = table([svc], [slice('np-a', 'np', [{ ip: '10.244.0.5', node: 'n1' }, { ip: '10.244.1.5', node: 'n2' }], [{ port: 8080 }])]);
  const ext = chain(tb, 'external');
  t.deepEqual(ext.rules, ['fib saddr type local jump mark-for-masquerade', `fib saddr type local goto ${chain(tb, 'service').name}`, `goto ${chain(tb, 'local').name}`]);
  t.deepEqual(chain(tb, 'local').rules, ['meta l4proto tcp dnat to 10.244.0.5:8080']);
  t.deepEqual(chain(tb, 'service').rules, ['meta l4proto tcp numgen random mod 2 0 dnat to 10.244.0.5:8080', 'meta l4proto tcp dnat to 10.244.1.5:8080']);
  t.deepEqual(Object.keys(el(tb, 'hairpin')), ['10.244.0.5 . 10.244.0.5', '10.244.1.5 . 10.244.1.5']);
  const remote = table([svc], [slice('np-a', 'np', [{ ip: '10.244.1.5', node: 'n2' }], [{ port: 8080 }])]);
  t.deepEqual(el(remote, 'no-endpoint-nodeports'), { 'tcp . 30080': 'drop' }, 'no local endpoint: external traffic dropped');
  const empty = table([svc], []);
  t.deepEqual(el(empty, 'no-endpoint-nodeports'), { 'tcp . 30080': 'goto reject-chain' });
  t.deepEqual(el(empty, 'service-nodeports'), {});
});

test('external IPs are looked up with the cluster IPs and go to the external chain', (t) => {
  const svc = service('e', { clusterIP: '10.96.0.30', externalIPs: ['192.0.2.30'], ports: [{ port: 80 }] });
  const tb = table([svc], [slice('e-a', 'e', [{ ip: '10.244.0.5' }], [{ port: 8080 }])]);
  t.is(el(tb, 'service-ips')['192.0.2.30 . tcp . 80'], `goto ${chain(tb, 'external').name}`);
});

test('UDP and SCTP ports use their protocol words', (t) => {
  const svc = service('dns', { clusterIP: '10.96.0.53', ports: [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 's', port: 9, protocol: 'SCTP' }] });
  const tb = table([svc], [slice('dns-a', 'dns', [{ ip: '10.244.0.53' }], [{ name: 'dns', port: 5353, protocol: 'UDP' }, { name: 's', port: 9, protocol: 'SCTP' }])]);
  t.deepEqual(Object.keys(el(tb, 'service-ips')).sort(), ['10.96.0.53 . sctp . 9', '10.96.0.53 . udp . 53']);
  t.deepEqual(chain(tb, 'service', 'udp/dns').rules.at(-1), 'meta l4proto udp dnat to 10.244.0.53:5353');
  t.deepEqual(chain(tb, 'service', 'sctp/s').rules.at(-1), 'meta l4proto sctp dnat to 10.244.0.53:9');
});

test('IPv6: the ip6 table takes the IPv6 cluster IP and endpoints, brackets in DNAT, dots for colons in names', (t) => {
  const svc = service('d', { clusterIP: '10.96.0.4', clusterIPs: ['10.96.0.4', 'fd00:96::4'], ports: [{ port: 80 }] });
  const slices = [slice('d-4', 'd', [{ ip: '10.244.0.4' }], [{ port: 8080 }]), slice('d-6', 'd', [{ ip: 'fd00:244::4' }], [{ port: 8080 }], { addressType: 'IPv6' })];
  const v6 = table([svc], slices, noMasq, 'ip6');
  t.deepEqual(Object.keys(el(v6, 'service-ips')), ['fd00:96::4 . tcp . 80']);
  t.deepEqual(chain(v6, 'service').rules, ['meta l4proto tcp dnat to [fd00:244::4]:8080']);
  t.deepEqual(el(v6, 'hairpin'), { 'fd00:244::4 . fd00:244::4': '' });
  t.is(v6.sets.get('hairpin')!.spec, 'type ipv6_addr . ipv6_addr ;');
  t.is(v6.chains.get('masquerading')!.rules[0], 'ct status dnat ip6 saddr . ip6 daddr @hairpin jump mark-for-masquerade');
  const sticky = service('d', { clusterIP: '10.96.0.4', clusterIPs: ['10.96.0.4', 'fd00:96::4'], sessionAffinity: 'ClientIP', ports: [{ port: 80 }] });
  const ep = chain(table([sticky], slices, noMasq, 'ip6'), 'endpoint');
  t.true(ep.name.endsWith('__fd00.244..4/8080'));
  t.deepEqual(ep.rules.at(-1), 'meta l4proto tcp dnat to [fd00:244::4]:8080');
  t.is(v6.sets.get('cluster-ips')!.spec, 'type ipv6_addr ;');
  t.deepEqual(v6.chains.get('services')!.rules[1], 'fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports');
  const v4only = table([web()], [webSlice([{ ip: '10.244.0.5' }])], noMasq, 'ip6');
  t.deepEqual(el(v4only, 'cluster-ips'), {}, 'an IPv4-only Service is not in the ip6 table');
});

test('the same objects in any order build the same table', (t) => {
  const svcs = [web(), service('b', { clusterIP: '10.96.0.2', ports: [{ port: 53, protocol: 'UDP' }] })];
  const slices = [webSlice([{ ip: '10.244.0.6' }, { ip: '10.244.0.5' }]), slice('b-a', 'b', [{ ip: '10.244.0.7' }], [{ port: 53, protocol: 'UDP' }])];
  t.deepEqual(table(svcs, slices), table([...svcs].reverse(), [...slices].reverse()));
});

test('the random pick is uniform: rule i of N matches with probability 1/(N-i), the last takes the rest', (t) => {
  for (let n = 1; n <= 12; n++) {
    const eps = Array.from({ length: n }, (_, i) => ({ ip: `10.244.0.${i + 1}` }));
    for (const affinity of [false, true]) {
      const extra = affinity ? { sessionAffinity: 'ClientIP' } : {};
      const rules = chain(table([web(extra)], [webSlice(eps)]), 'service').rules.filter((r) => !r.includes('saddr @'));
      t.is(rules.length, n);
      let left = 1;
      const chance = rules.map((r, i) => {
        const m = /numgen random mod (\d+) 0 /.exec(r);
        t.is(m === null, i === n - 1, r);
        const p = left / (m ? Number(m[1]) : 1);
        left -= p;
        return p;
      });
      for (const p of chance) t.true(Math.abs(p - 1 / n) < 1e-12, `${n} endpoints: ${chance.join(' ')}`);
    }
  }
});
