import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeLeaseType } from '../../../../../apiserver/registry/types/leases';
import { makePodDisruptionBudgetType } from '../../../../../apiserver/registry/types/poddisruptionbudgets';
import { ago, cells, fields, now } from './fixtures';

const leaseType = makeLeaseType(now);
const pdbType = makePodDisruptionBudgetType(now);

test('lease: valid heartbeat passes; bad durations and strategies fail', (t) => {
  const o: KObject = {
    metadata: { name: 'node-1', namespace: 'svc-node-lease', creationTimestamp: ago(8 * 86400_000) },
    spec: { holderIdentity: 'node-1', leaseDurationSeconds: 40, renewTime: '2025-03-01T11:59:50.000000Z', leaseTransitions: 0 },
  };
  t.deepEqual(leaseType.validate!(o), []);
  t.deepEqual(cells(leaseType, o), { Holder: 'node-1', Age: '8d' });
  t.is(leaseType.group, 'coordination.svc.io');
  const bad: KObject = { metadata: { name: 'x' }, spec: { leaseDurationSeconds: 0, leaseTransitions: -1, strategy: 'Random', preferredHolder: 'a' } };
  t.deepEqual(fields(leaseType.validate!(bad)), ['spec.leaseDurationSeconds', 'spec.leaseTransitions', 'spec.strategy']);
  const holder: KObject = { metadata: { name: 'x' }, spec: { preferredHolder: 'a' } };
  t.deepEqual(leaseType.validate!(holder).map((c) => c.message), ['Forbidden: may only be specified if `strategy` is defined']);
});

test('pdb: minAvailable and maxUnavailable are exclusive int-or-percent', (t) => {
  const ok: KObject = { metadata: { name: 'p', namespace: 'd' }, spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } } } };
  t.deepEqual(pdbType.validate!(ok), []);
  const both: KObject = { metadata: { name: 'p' }, spec: { minAvailable: 1, maxUnavailable: 1 } };
  t.deepEqual(both.spec && pdbType.validate!(both).map((c) => [c.field, c.message.endsWith('minAvailable and maxUnavailable cannot be both set')]), [['spec', true]]);
  const bad: KObject = { metadata: { name: 'p' }, spec: { minAvailable: '150%', selector: { matchLabels: { 'bad key': 'v' } } } };
  t.deepEqual(fields(pdbType.validate!(bad)), ['spec.minAvailable', 'spec.selector.matchLabels']);
  const neg: KObject = { metadata: { name: 'p' }, spec: { maxUnavailable: -1, unhealthyPodEvictionPolicy: 'Never' } };
  t.deepEqual(fields(pdbType.validate!(neg)), ['spec.maxUnavailable', 'spec.unhealthyPodEvictionPolicy']);
  const word: KObject = { metadata: { name: 'p' }, spec: { maxUnavailable: 'half' } };
  t.true(pdbType.validate!(word)[0].message.includes("a valid percent string must be a numeric string followed by an ending '%'"));
});

test('pdb table and metadata', (t) => {
  const o: KObject = { metadata: { name: 'p', creationTimestamp: ago(30_000) }, spec: { minAvailable: 2 }, status: { disruptionsAllowed: 1 } };
  t.deepEqual(cells(pdbType, o), { 'Min Available': '2', 'Max Unavailable': 'N/A', 'Allowed Disruptions': 1, Age: '30s' });
  t.is(pdbType.group, 'policy');
  t.true(pdbType.hasStatus);
  t.deepEqual(pdbType.specFields, ['spec']);
});
