/**
 * Properties of the NetworkPolicy table over generated clusters: every jump has its chain; pod
 * chains are `return` rules then one `drop`; only this node's pods get chains; and policies are
 * additive (upstream: adding a policy never takes away what others allow, and never un-isolates).
 */
import test from 'ava';
import fc from 'fast-check';
import type { KObject } from '../../../../apiserver/api/types';
import { buildNetpolTable, type NetpolTable } from '../../../../agent/netpol/nft-netpol';

const NAMESPACES = ['a', 'b'];
const labels = fc.dictionary(fc.constantFrom('app', 'role'), fc.constantFrom('x', 'y'), { maxKeys: 2 });
const selector = fc.record({ matchLabels: labels });

const pods = fc.uniqueArray(fc.record({ ns: fc.constantFrom(...NAMESPACES), labels, node: fc.constantFrom('n1', 'n2'), last: fc.integer({ min: 2, max: 250 }) }), { selector: (p) => p.last, maxLength: 6 }).map((ps) =>
  ps.map(
    (p, i): KObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: p.ns, labels: p.labels },
      spec: { nodeName: p.node, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8000 + i }] }] },
      status: { podIP: `10.0.0.${p.last}` },
    }),
  ),
);

const peer = fc.oneof(
  fc.record({ podSelector: selector }),
  fc.record({ namespaceSelector: fc.record({ matchLabels: fc.dictionary(fc.constant('kubernetes.io/metadata.name'), fc.constantFrom(...NAMESPACES), { maxKeys: 1 }) }) }),
  fc.record({ ipBlock: fc.record({ cidr: fc.constant('192.168.0.0/16'), except: fc.subarray(['192.168.1.0/24', '192.168.2.0/24']) }) }),
);
const port = fc.oneof(fc.record({ protocol: fc.constantFrom('TCP', 'UDP'), port: fc.integer({ min: 1, max: 1000 }) }), fc.record({ protocol: fc.constant('TCP'), port: fc.constant('http') }), fc.record({ protocol: fc.constant('SCTP') }));
const rule = fc.record({ peers: fc.array(peer, { maxLength: 2 }), ports: fc.array(port, { maxLength: 2 }) });

const policy = fc
  .record({
    ns: fc.constantFrom(...NAMESPACES),
    podSelector: selector,
    ingress: fc.option(fc.array(rule, { maxLength: 2 }), { nil: undefined }),
    egress: fc.option(fc.array(rule, { maxLength: 2 }), { nil: undefined }),
    types: fc.option(fc.subarray(['Ingress', 'Egress'], { minLength: 1 }), { nil: undefined }),
  })
  .map(
    (p): Omit<KObject, 'metadata'> & { ns: string } => ({
      ns: p.ns,
      apiVersion: 'networking.svc.io/v1',
      kind: 'NetworkPolicy',
      spec: {
        podSelector: p.podSelector,
        ...(p.ingress ? { ingress: p.ingress.map((r) => ({ from: r.peers, ports: r.ports })) } : {}),
        ...(p.egress ? { egress: p.egress.map((r) => ({ to: r.peers, ports: r.ports })) } : {}),
        ...(p.types ? { policyTypes: p.types } : {}),
      },
    }),
  );
const policies = fc.array(policy, { maxLength: 4 }).map((ps) => ps.map(({ ns, ...p }, i): KObject => ({ ...p, metadata: { name: `np${i}`, namespace: ns } })));

const namespaces = NAMESPACES.map((n): KObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }));
const build = (ps: KObject[], pol: KObject[]) => buildNetpolTable({ policies: pol, pods: ps, namespaces, nodeName: 'n1' });
const podChains = (t: NetpolTable) => [...t.keys()].filter((k) => k !== 'forward');

test('every jump has its chain; pod chains are returns then one drop; only local pods get chains', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(pods, policies, (ps, pol) => {
        const tbl = build(ps, pol);
        const targets = (tbl.get('forward')?.rules ?? []).flatMap((r) => [...r.matchAll(/jump (\S+?)[,\s}]/g)].map((m) => m[1]));
        for (const target of targets) if (!tbl.has(target)) return false;
        const localKeys = new Set(ps.filter((p) => (p.spec as { nodeName: string }).nodeName === 'n1').map((p) => (p.status as { podIP: string }).podIP.replace(/\./g, '_')));
        for (const name of podChains(tbl)) {
          const rules = tbl.get(name)!.rules;
          if (rules.at(-1) !== 'drop' || !rules.slice(0, -1).every((r) => r.endsWith('return'))) return false;
          if (!localKeys.has(name.replace(/^(ingress|egress)-/, ''))) return false;
          if (!targets.includes(name)) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    ),
  );
});

test('policies are additive: adding one keeps every chain and every allow rule already there', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(pods, policies, policy, (ps, pol, extra) => {
        const before = build(ps, pol);
        const { ns, ...p } = extra;
        const after = build(ps, [...pol, { ...p, metadata: { name: 'zz-extra', namespace: ns } }]);
        for (const name of podChains(before)) {
          const a = after.get(name);
          if (!a) return false;
          const kept = new Set(a.rules);
          if (!before.get(name)!.rules.every((r) => kept.has(r))) return false;
        }
        return true;
      }),
      { numRuns: 300 },
    ),
  );
});
