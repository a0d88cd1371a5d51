/** NetworkPolicy semantics (upstream networking v1) as nftables rules: the pure table builder. */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { buildNetpolTable, renderNetpol, renderNetpolDelete, type NetpolInput } from '../../../../agent/netpol/nft-netpol';
import { podViewOf, policyTypesOf } from '../../../../agent/netpol/selection';

interface PodOpts {
  ns?: string;
  labels?: Record<string, string>;
  node?: string;
  ports?: { name: string; containerPort: number; protocol?: string }[];
  ips?: string[];
  hostNetwork?: boolean;
  phase?: string;
}

const pod = (name: string, ip: string, o: PodOpts = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: o.ns ?? 'default', labels: o.labels ?? {} },
  spec: { nodeName: o.node ?? 'n1', hostNetwork: o.hostNetwork, containers: [{ name: 'c', ports: o.ports ?? [] }] },
  status: { phase: o.phase ?? 'Running', podIP: ip, ...(o.ips ? { podIPs: o.ips.map((x) => ({ ip: x })) } : {}) },
});

const ns = (name: string, labels: Record<string, string> = {}): KObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

const policy = (name: string, spec: Record<string, unknown>, namespace = 'default'): KObject => ({ apiVersion: 'networking.svc.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace }, spec });

const build = (p: Partial<NetpolInput>) => buildNetpolTable({ policies: [], pods: [], namespaces: [ns('default'), ns('other', { team: 'x' })], nodeName: 'n1', ...p });
const chain = (p: Partial<NetpolInput>, name: string) => build(p).get(name)?.rules;

const web = pod('web', '10.0.0.5', { labels: { app: 'web' }, ports: [{ name: 'http', containerPort: 8080 }] });
const client = pod('client', '10.0.0.6', { labels: { role: 'client' } });
const remote = pod('remote', '10.0.1.7', { labels: { role: 'client' }, node: 'n2' });
const otherNs = pod('o', '10.0.2.8', { ns: 'other', labels: { role: 'client' }, node: 'n2' });

test('no policy: every pod allowed (only the established rule, no per-pod chains)', (t) => {
  const tbl = build({ pods: [web, client] });
  t.deepEqual([...tbl.keys()], ['forward']);
  t.deepEqual(tbl.get('forward')!.rules, ['ct state established,related accept']);
});

test('default-deny ingress: the selected pod gets a chain that only drops; unselected pods stay open', (t) => {
  const tbl = build({ pods: [web, client], policies: [policy('deny', { podSelector: { matchLabels: { app: 'web' } } })] });
  t.deepEqual(tbl.get('ingress-10_0_0_5')!.rules, ['drop']);
  t.false(tbl.has('ingress-10_0_0_6'));
  t.false(tbl.has('egress-10_0_0_5'), 'policyTypes defaults to Ingress only');
  t.deepEqual(tbl.get('forward')!.rules, ['ct state established,related accept', 'ip daddr vmap { 10.0.0.5 : jump ingress-10_0_0_5 }']);
});

test('policyTypes default as upstream: Ingress always, Egress when egress rules are given; explicit policyTypes win', (t) => {
  t.deepEqual(policyTypesOf(policy('a', { podSelector: {} })), ['Ingress']);
  t.deepEqual(policyTypesOf(policy('a', { podSelector: {}, egress: [{}] })), ['Ingress', 'Egress']);
  t.deepEqual(policyTypesOf(policy('a', { podSelector: {}, policyTypes: ['Egress'] })), ['Egress']);
  const tbl = build({ pods: [web], policies: [policy('e', { podSelector: {}, policyTypes: ['Egress'] })] });
  t.deepEqual(tbl.get('egress-10_0_0_5')!.rules, ['drop']);
  t.false(tbl.has('ingress-10_0_0_5'));
});

test('podSelector peer: pods of the policy namespace on any node; other namespaces are not peers', (t) => {
  const p = policy('allow', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }] }] });
  t.deepEqual(chain({ pods: [web, client, remote, otherNs], policies: [p] }, 'ingress-10_0_0_5'), ['ip saddr { 10.0.0.6, 10.0.1.7 } return', 'drop']);
});

test('namespaceSelector alone: every pod of the selected namespaces; with podSelector: both must match', (t) => {
  const alone = policy('a', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }] });
  t.deepEqual(chain({ pods: [web, client, otherNs], policies: [alone] }, 'ingress-10_0_0_5'), ['ip saddr 10.0.2.8 return', 'drop']);
  const other2 = pod('o2', '10.0.2.9', { ns: 'other', labels: { role: 'server' } });
  const both = policy('b', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } }, podSelector: { matchLabels: { role: 'client' } } }] }] });
  t.deepEqual(chain({ pods: [web, client, otherNs, other2], policies: [both] }, 'ingress-10_0_0_5'), ['ip saddr 10.0.2.8 return', 'drop']);
  const byName = policy('c', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } } }] }] });
  t.deepEqual(chain({ pods: [web, otherNs, other2], policies: [byName] }, 'ingress-10_0_0_5'), ['ip saddr { 10.0.2.8, 10.0.2.9 } return', 'drop'], 'the name label is implied');
  const empty = policy('d', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {} }] }] });
  t.deepEqual(chain({ pods: [web, client, otherNs], policies: [empty] }, 'ingress-10_0_0_5'), ['ip saddr { 10.0.0.5, 10.0.0.6, 10.0.2.8 } return', 'drop'], 'an empty namespaceSelector selects all namespaces');
});

test('matchExpressions in selectors', (t) => {
  const p = policy('x', { podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'role', operator: 'NotIn', values: ['client'] }] } }] }] });
  const other = pod('db', '10.0.0.9', { labels: { role: 'db' } });
  t.deepEqual(chain({ pods: [web, client, other], policies: [p] }, 'ingress-10_0_0_5'), ['ip saddr { 10.0.0.5, 10.0.0.9 } return', 'drop']);
});

test('ipBlock with except; IPv6 blocks use ip6', (t) => {
  const p = policy('b', { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '192.168.0.0/16', except: ['192.168.1.0/24', '192.168.2.0/24'] } }, { ipBlock: { cidr: 'fd00::/64' } }] }] });
  t.deepEqual(chain({ pods: [web], policies: [p] }, 'ingress-10_0_0_5'), ['ip saddr 192.168.0.0/16 ip saddr != 192.168.1.0/24 ip saddr != 192.168.2.0/24 return', 'ip6 saddr fd00::/64 return', 'drop']);
});

test('ports: protocol, port ranges (endPort), protocol only; cross product with peers', (t) => {
  const p = policy('p', {
    podSelector: {},
    ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ protocol: 'TCP', port: 80 }, { protocol: 'UDP', port: 5000, endPort: 5010 }, { protocol: 'SCTP' }] }],
  });
  t.deepEqual(chain({ pods: [web, client], policies: [p] }, 'ingress-10_0_0_5'), [
    'ip saddr 10.0.0.6 tcp dport 80 return',
    'ip saddr 10.0.0.6 udp dport 5000-5010 return',
    'ip saddr 10.0.0.6 meta l4proto sctp return',
    'drop',
  ]);
  const anyPeer = policy('q', { podSelector: {}, ingress: [{ ports: [{ protocol: 'TCP', port: 443 }] }] });
  t.deepEqual(chain({ pods: [web], policies: [anyPeer] }, 'ingress-10_0_0_5'), ['tcp dport 443 return', 'drop']);
  const allowAll = policy('r', { podSelector: {}, ingress: [{}] });
  t.deepEqual(chain({ pods: [web], policies: [allowAll] }, 'ingress-10_0_0_5'), ['return', 'drop'], 'an empty rule allows everything');
});

test('named ports: ingress resolves in the selected pod (name and protocol); unresolved allows nothing', (t) => {
  const p = policy('n', { podSelector: {}, ingress: [{ ports: [{ protocol: 'TCP', port: 'http' }, { protocol: 'UDP', port: 'http' }] }] });
  const tbl = build({ pods: [web, client], policies: [p] });
  t.deepEqual(tbl.get('ingress-10_0_0_5')!.rules, ['tcp dport 8080 return', 'drop']);
  t.deepEqual(tbl.get('ingress-10_0_0_6')!.rules, ['drop'], 'the client has no port named http');
});

test('named ports: egress resolves in each destination pod; an ipBlock destination cannot name a port', (t) => {
  const web2 = pod('web2', '10.0.1.9', { labels: { app: 'web' }, node: 'n2', ports: [{ name: 'http', containerPort: 9090 }] });
  const p = policy('e', {
    podSelector: { matchLabels: { role: 'client' } },
    policyTypes: ['Egress'],
    egress: [{ to: [{ podSelector: { matchLabels: { app: 'web' } } }, { ipBlock: { cidr: '10.9.0.0/16' } }], ports: [{ protocol: 'TCP', port: 'http' }] }],
  });
  t.deepEqual(chain({ pods: [web, web2, client], policies: [p] }, 'egress-10_0_0_6'), ['ip daddr 10.0.0.5 tcp dport 8080 return', 'ip daddr 10.0.1.9 tcp dport 9090 return', 'drop']);
  t.deepEqual(build({ pods: [web, web2, client], policies: [p] }).get('forward')!.rules[1], 'ip saddr vmap { 10.0.0.6 : jump egress-10_0_0_6 }');
});

test('policies are additive; egress and ingress of one pod both checked (egress first)', (t) => {
  const a = policy('a', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ ipBlock: { cidr: '10.1.0.0/16' } }] }] });
  const b = policy('b', { podSelector: {}, ingress: [{ ports: [{ protocol: 'TCP', port: 22 }] }], egress: [{ to: [{ ipBlock: { cidr: '10.2.0.0/16' } }] }] });
  const tbl = build({ pods: [web], policies: [b, a] });
  t.deepEqual(tbl.get('ingress-10_0_0_5')!.rules, ['ip saddr 10.1.0.0/16 return', 'tcp dport 22 return', 'drop']);
  t.deepEqual(tbl.get('egress-10_0_0_5')!.rules, ['ip daddr 10.2.0.0/16 return', 'drop']);
  t.deepEqual(tbl.get('forward')!.rules.slice(1), ['ip saddr vmap { 10.0.0.5 : jump egress-10_0_0_5 }', 'ip daddr vmap { 10.0.0.5 : jump ingress-10_0_0_5 }']);
});

test('only this node\'s pods are enforced; other namespaces\' policies do not select; host-network, finished and address-less pods are skipped', (t) => {
  const hostNet = pod('h', '192.168.5.1', { hostNetwork: true });
  const done = pod('d', '10.0.0.7', { phase: 'Succeeded' });
  const pending = pod('p', '');
  const all = policy('all', { podSelector: {} });
  const tbl = build({ pods: [web, remote, hostNet, done, pending, otherNs], policies: [all] });
  t.deepEqual([...tbl.keys()], ['forward', 'ingress-10_0_0_5']);
  t.is(podViewOf(pending), undefined);
  const selectAllPeers = policy('peers', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: {} }] }] });
  t.deepEqual(chain({ pods: [web, hostNet, done], policies: [selectAllPeers] }, 'ingress-10_0_0_5'), ['ip saddr 10.0.0.5 return', 'drop']);
});

test('dual-stack pods: every address maps to the pod chain; peers split by family', (t) => {
  const ds = pod('ds', '10.0.0.20', { ips: ['10.0.0.20', 'fd00::20'], labels: { role: 'client' } });
  const p = policy('a', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }] }] });
  const self = policy('b', { podSelector: { matchLabels: { role: 'client' } } });
  const tbl = build({ pods: [web, ds], policies: [p, self] });
  t.deepEqual(tbl.get('ingress-10_0_0_5')!.rules, ['ip saddr 10.0.0.20 return', 'ip6 saddr fd00::20 return', 'drop']);
  t.deepEqual(tbl.get('forward')!.rules.slice(1), ['ip daddr vmap { 10.0.0.20 : jump ingress-10_0_0_20, 10.0.0.5 : jump ingress-10_0_0_5 }', 'ip6 daddr vmap { fd00::20 : jump ingress-10_0_0_20 }']);
});

test('a peer selecting no pods allows nothing (not everything)', (t) => {
  const p = policy('a', { podSelector: {}, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'nobody' } } }] }] });
  t.deepEqual(chain({ pods: [web], policies: [p] }, 'ingress-10_0_0_5'), ['drop']);
});

test('the script replaces our table in one transaction; delete tolerates an absent table', (t) => {
  const s = renderNetpol(build({ pods: [web], policies: [policy('deny', { podSelector: {} })] }));
  t.is(
    s,
    [
      'add table inet svc-netpol',
      'delete table inet svc-netpol',
      'add table inet svc-netpol',
      'add chain inet svc-netpol forward { type filter hook forward priority 0 ; policy accept ; }',
      'add chain inet svc-netpol ingress-10_0_0_5',
      'add rule inet svc-netpol forward ct state established,related accept',
      'add rule inet svc-netpol forward ip daddr vmap { 10.0.0.5 : jump ingress-10_0_0_5 }',
      'add rule inet svc-netpol ingress-10_0_0_5 drop',
      '',
    ].join('\n'),
  );
  t.is(renderNetpolDelete(), 'add table inet svc-netpol\ndelete table inet svc-netpol\n');
});

test('malformed addresses never reach nft: a bad pod address is ignored, a bad block allows nothing; blocks are canonical', (t) => {
  const bad = pod('bad', '10.0.0.300', { labels: { role: 'client' } });
  const p = policy('a', { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'client' } } }, { ipBlock: { cidr: 'nonsense' } }, { ipBlock: { cidr: '10.1.2.3/16', except: ['10.1.9.9/24'] } }] }] });
  t.deepEqual(chain({ pods: [web, bad, client], policies: [p] }, 'ingress-10_0_0_5'), ['ip saddr 10.0.0.6 return', 'ip saddr 10.1.0.0/16 ip saddr != 10.1.9.0/24 return', 'drop']);
  t.is(podViewOf(bad), undefined);
});
