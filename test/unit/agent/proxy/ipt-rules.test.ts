/** The iptables mode's rules: upstream kube-proxy's iptables layout (SVC- names) with the nftables mode's decisions. */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { buildIptRules, type IptRules } from '../../../../agent/proxy/ipt-rules';
import { emptySaved, renderRestore } from '../../../../agent/proxy/ipt-render';
import type { Family } from '../../../../agent/proxy/nft-model';
import { shortHash, type RuleOptions } from '../../../../agent/proxy/nft-rules';
import { servicePortsOf } from '../../../../agent/proxy/service-ports';
import { service, slice, web, webPorts, type EpSpec } from './fixtures';

const noMasq: RuleOptions = { clusterCIDRs: [], masqueradeAll: false };
function rules(services: KObject[], slices: KObject[], o: RuleOptions = noMasq, family: Family = 'ip'): IptRules {
  return buildIptRules(family, servicePortsOf(services, slices, 'n1'), o);
}
const webSlice = (eps: EpSpec[]) => slice('web-a', 'web', eps, webPorts);
const nat = (r: IptRules, chain: string) => r.tables.nat.get(chain) ?? [];
const filter = (r: IptRules, chain: string) => r.tables.filter.get(chain) ?? [];
/** The per-port chains of a kind (SVC, SVL, EXT, SEP) in the nat table. */
const chainsOf = (r: IptRules, kind: string) => [...r.tables.nat.keys()].filter((n) => n.startsWith(`SVC-${kind}-`));
const svcHash = (id: string) => shortHash(id, 16);

test('a ClusterIP Service with two ready endpoints: the whole restore input, jumps from the built-in chains inserted', (t) => {
  const r = rules([web()], [webSlice([{ ip: '10.244.0.5' }, { ip: '10.244.1.5' }, { ip: '10.244.2.5', ready: false }])]);
  const svc = `SVC-SVC-${svcHash('default/web:httptcp')}`;
  const a = `SVC-SEP-${svcHash('default/web:httptcp10.244.0.5:8080')}`;
  const b = `SVC-SEP-${svcHash('default/web:httptcp10.244.1.5:8080')}`;
  t.is(
    renderRestore(r, emptySaved()),
    [
      '*filter',
      ':SVC-SERVICES - [0:0]',
      ':SVC-EXTERNAL-SERVICES - [0:0]',
      '-I INPUT -m conntrack --ctstate NEW -m comment --comment "svc-proxy externally-visible service portals" -j SVC-EXTERNAL-SERVICES',
      '-I FORWARD -m conntrack --ctstate NEW -m comment --comment "svc-proxy externally-visible service portals" -j SVC-EXTERNAL-SERVICES',
      '-I FORWARD -m conntrack --ctstate NEW -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      '-I OUTPUT -m conntrack --ctstate NEW -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      'COMMIT',
      '*nat',
      ':SVC-SERVICES - [0:0]',
      ':SVC-NODEPORTS - [0:0]',
      ':SVC-POSTROUTING - [0:0]',
      ':SVC-MARK-MASQ - [0:0]',
      `:${svc} - [0:0]`,
      `:${a} - [0:0]`,
      `:${b} - [0:0]`,
      '-I PREROUTING -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      '-I OUTPUT -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      '-I POSTROUTING -m comment --comment "svc-proxy postrouting rules" -j SVC-POSTROUTING',
      `-A SVC-SERVICES -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j ${svc}`,
      '-A SVC-SERVICES -m comment --comment "svc-proxy service nodeports" ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j SVC-NODEPORTS',
      '-A SVC-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A SVC-POSTROUTING -j MARK --xor-mark 0x4000',
      '-A SVC-POSTROUTING -m comment --comment "svc-proxy service traffic requiring SNAT" -j MASQUERADE --random-fully',
      '-A SVC-MARK-MASQ -j MARK --or-mark 0x4000',
      `-A ${svc} -m comment --comment "default/web:http -> 10.244.0.5:8080" -m statistic --mode random --probability 0.5000000000 -j ${a}`,
      `-A ${svc} -m comment --comment "default/web:http -> 10.244.1.5:8080" -j ${b}`,
      `-A ${a} -m comment --comment "default/web:http" -s 10.244.0.5/32 -j SVC-MARK-MASQ`,
      `-A ${a} -m comment --comment "default/web:http" -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:8080`,
      `-A ${b} -m comment --comment "default/web:http" -s 10.244.1.5/32 -j SVC-MARK-MASQ`,
      `-A ${b} -m comment --comment "default/web:http" -p tcp -m tcp -j DNAT --to-destination 10.244.1.5:8080`,
      'COMMIT',
      '',
    ].join('\n'),
  );
});

test('chain names: upstream\'s hashed form under the SVC- prefix, within iptables\' 28 characters', (t) => {
  const r = rules([web()], [webSlice([{ ip: '10.244.0.5' }])]);
  for (const name of r.tables.nat.keys()) {
    t.true(name.startsWith('SVC-'));
    t.true(name.length <= 28, name);
  }
  t.regex(chainsOf(r, 'SVC')[0], /^SVC-SVC-[A-Z2-7]{16}$/);
  t.regex(chainsOf(r, 'SEP')[0], /^SVC-SEP-[A-Z2-7]{16}$/);
});

test('endpoints are picked with probability 1/(n-i), the last unconditionally', (t) => {
  const eps = ['10.244.0.1', '10.244.0.2', '10.244.0.3', '10.244.0.4'].map((ip) => ({ ip }));
  const svc = nat(rules([web()], [webSlice(eps)]), chainsOf(rules([web()], [webSlice(eps)]), 'SVC')[0]);
  t.deepEqual(
    svc.map((r) => /--probability (\S+)/.exec(r)?.[1] ?? 'last'),
    ['0.2500000000', '0.3333333333', '0.5000000000', 'last'],
  );
});

test('no usable endpoints: the filter table rejects the cluster IP (REJECT), no nat rule and no service chain', (t) => {
  const r = rules([web()], [webSlice([{ ip: '10.244.0.5', ready: false }])]);
  t.deepEqual(filter(r, 'SVC-SERVICES'), ['-m comment --comment "default/web:http has no endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j REJECT']);
  t.deepEqual(nat(r, 'SVC-SERVICES'), ['-m comment --comment "svc-proxy service nodeports" ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j SVC-NODEPORTS']);
  t.deepEqual(chainsOf(r, 'SVC'), []);
  t.deepEqual(chainsOf(r, 'SEP'), []);
});

test('serving-and-terminating endpoints are used when none is ready', (t) => {
  const r = rules([web()], [webSlice([{ ip: '10.244.0.5', ready: false, serving: true, terminating: true }, { ip: '10.244.0.6', ready: false }])]);
  t.is(chainsOf(r, 'SEP').length, 1);
  t.true(nat(r, chainsOf(r, 'SEP')[0]).some((x) => x.endsWith('DNAT --to-destination 10.244.0.5:8080')));
});

test('ClientIP affinity: a recent list per endpoint chain, checked with the timeout before the random pick and set by the endpoint chain', (t) => {
  const r = rules([web({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } })], [webSlice([{ ip: '10.244.0.5' }, { ip: '10.244.1.5' }])]);
  const [a, b] = chainsOf(r, 'SEP');
  const svc = nat(r, chainsOf(r, 'SVC')[0]);
  t.deepEqual(svc.slice(0, 2), [
    `-m comment --comment "default/web:http -> 10.244.0.5:8080" -m recent --name ${a} --rcheck --seconds 600 --reap -j ${a}`,
    `-m comment --comment "default/web:http -> 10.244.1.5:8080" -m recent --name ${b} --rcheck --seconds 600 --reap -j ${b}`,
  ]);
  t.regex(svc[2], /--probability 0\.5000000000/);
  t.is(nat(r, a)[1], `-m comment --comment "default/web:http" -m recent --name ${a} --set -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:8080`);
});

test('masquerade: off-cluster sources with clusterCIDR, every source with masqueradeAll, none otherwise', (t) => {
  const eps = [webSlice([{ ip: '10.244.0.5' }])];
  const masq = (o: RuleOptions) => {
    const r = rules([web()], eps, o);
    return nat(r, chainsOf(r, 'SVC')[0]).filter((x) => x.endsWith('-j SVC-MARK-MASQ'));
  };
  t.deepEqual(masq({ clusterCIDRs: ['10.244.0.0/16', 'fd00::/64'], masqueradeAll: false }), ['-m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 ! -s 10.244.0.0/16 -j SVC-MARK-MASQ']);
  t.deepEqual(masq({ clusterCIDRs: [], masqueradeAll: true }), ['-m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j SVC-MARK-MASQ']);
  t.deepEqual(masq(noMasq), []);
});

test('internalTrafficPolicy Local: the cluster IP goes to SVC-SVL- (this node\'s endpoints); dropped when only other nodes have endpoints', (t) => {
  const svc = web({ internalTrafficPolicy: 'Local' });
  const r = rules([svc], [webSlice([{ ip: '10.244.0.5', node: 'n1' }, { ip: '10.244.1.5', node: 'n2' }])]);
  const svl = chainsOf(r, 'SVL')[0];
  t.is(nat(r, 'SVC-SERVICES')[0], `-m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j ${svl}`);
  t.deepEqual(nat(r, svl), [`-m comment --comment "default/web:http -> 10.244.0.5:8080" -j ${chainsOf(r, 'SEP').find((c) => nat(r, c).some((x) => x.includes('10.244.0.5:8080')))}`]);
  const none = rules([svc], [webSlice([{ ip: '10.244.1.5', node: 'n2' }])]);
  t.deepEqual(filter(none, 'SVC-SERVICES'), ['-m comment --comment "default/web:http has no local endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j DROP']);
  t.deepEqual(chainsOf(none, 'SVL'), []);
});

test('NodePort, Cluster policy: SVC-NODEPORTS sends the port to SVC-EXT-, which masquerades and jumps to the service chain', (t) => {
  const svc = service('np', { type: 'NodePort', clusterIP: '10.96.0.20', externalIPs: ['192.0.2.7'], ports: [{ port: 80, nodePort: 30080 }] });
  const r = rules([svc], [slice('np-a', 'np', [{ ip: '10.244.0.5' }], [{ port: 8080 }])]);
  const ext = chainsOf(r, 'EXT')[0];
  t.deepEqual(nat(r, 'SVC-NODEPORTS'), [`-m comment --comment "default/np:80" -p tcp -m tcp --dport 30080 -j ${ext}`]);
  t.deepEqual(nat(r, ext), ['-m comment --comment "masquerade traffic for default/np:80 external destinations" -j SVC-MARK-MASQ', `-j ${chainsOf(r, 'SVC')[0]}`]);
  t.true(nat(r, 'SVC-SERVICES').includes(`-m comment --comment "default/np:80 external IP" -d 192.0.2.7/32 -p tcp -m tcp --dport 80 -j ${ext}`));
  t.deepEqual(filter(r, 'SVC-EXTERNAL-SERVICES'), []);
});

test('NodePort, Local policy: the node\'s own traffic to any endpoint (masqueraded), other traffic to local ones with its source kept; no local endpoint: dropped', (t) => {
  const svc = service('np', { type: 'NodePort', clusterIP: '10.96.0.20', externalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080 }] });
  const r = rules([svc], [slice('np-a', 'np', [{ ip: '10.244.0.5', node: 'n1' }, { ip: '10.244.1.5', node: 'n2' }], [{ port: 8080 }])]);
  t.deepEqual(nat(r, chainsOf(r, 'EXT')[0]), [
    '-m comment --comment "masquerade LOCAL traffic for default/np:80 external destinations" -m addrtype --src-type LOCAL -j SVC-MARK-MASQ',
    `-m comment --comment "route LOCAL traffic for default/np:80 external destinations" -m addrtype --src-type LOCAL -j ${chainsOf(r, 'SVC')[0]}`,
    `-j ${chainsOf(r, 'SVL')[0]}`,
  ]);
  const remote = rules([svc], [slice('np-a', 'np', [{ ip: '10.244.1.5', node: 'n2' }], [{ port: 8080 }])]);
  t.deepEqual(filter(remote, 'SVC-EXTERNAL-SERVICES'), ['-m comment --comment "default/np:80 has no local endpoints" ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j DROP']);
});

test('a NodePort without endpoints: the node port and the cluster IP are rejected; UDP and SCTP match their protocol', (t) => {
  const svc = service('np', { type: 'NodePort', clusterIP: '10.96.0.20', ports: [{ name: 'u', port: 53, protocol: 'UDP', nodePort: 30053 }, { name: 's', port: 99, protocol: 'SCTP', nodePort: 30099 }] });
  const r = rules([svc], []);
  t.deepEqual(filter(r, 'SVC-EXTERNAL-SERVICES'), [
    '-m comment --comment "default/np:s has no endpoints" ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -p sctp -m sctp --dport 30099 -j REJECT',
    '-m comment --comment "default/np:u has no endpoints" ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -p udp -m udp --dport 30053 -j REJECT',
  ]);
  t.is(filter(r, 'SVC-SERVICES').length, 2);
  t.deepEqual(nat(r, 'SVC-NODEPORTS'), []);
});

test('IPv6: only the family\'s cluster IPs and endpoints, /128 hosts, bracketed DNAT, ::1 excluded from node ports', (t) => {
  const svc = web({ clusterIPs: ['10.96.0.10', 'fd00::10'] });
  const slices = [webSlice([{ ip: '10.244.0.5' }]), slice('web-b', 'web', [{ ip: 'fd00:244::5' }], webPorts, { addressType: 'IPv6' })];
  const r = rules([svc], slices, noMasq, 'ip6');
  t.regex(nat(r, 'SVC-SERVICES')[0], /-d fd00::10\/128 -p tcp -m tcp --dport 80 -j SVC-SVC-/);
  t.regex(nat(r, 'SVC-SERVICES')[1], /! -d ::1\/128 -m addrtype --dst-type LOCAL -j SVC-NODEPORTS$/);
  const sep = chainsOf(r, 'SEP');
  t.is(sep.length, 1);
  t.is(nat(r, sep[0])[1], '-m comment --comment "default/web:http" -p tcp -m tcp -j DNAT --to-destination [fd00:244::5]:8080');
  t.false(JSON.stringify([...r.tables.nat]).includes('10.96.0.10'));
});
