import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { NAMESPACE_FINALIZER } from '../../../../../apiserver/registry/meta-validation';
import { LABEL_METADATA_NAME, makeNamespaceType } from '../../../../../apiserver/registry/types/namespaces';
import { ago, cells, now } from './fixtures';

const nsType = makeNamespaceType(now);

test('defaults: phase Active, the svc finalizer, the metadata.name label', (t) => {
  const o: KObject = { metadata: { name: 'team-a', uid: 'u1' } };
  nsType.defaults!(o);
  t.deepEqual(o.spec, { finalizers: [NAMESPACE_FINALIZER] });
  t.deepEqual(o.status, { phase: 'Active' });
  t.deepEqual(o.metadata.labels, { [LABEL_METADATA_NAME]: 'team-a' });
  t.is(NAMESPACE_FINALIZER, 'svc');
  t.deepEqual(nsType.validate!(o), []);
});

test('an explicitly empty finalizer list is kept', (t) => {
  const o: KObject = { metadata: { name: 'x' }, spec: { finalizers: [] } };
  nsType.defaults!(o);
  t.deepEqual(o.spec, { finalizers: [] });
});

test('update keeps the stored spec.finalizers (they change only through finalize)', (t) => {
  const old: KObject = { metadata: { name: 'x' }, spec: { finalizers: ['svc'] }, status: { phase: 'Active' } };
  const next: KObject = { metadata: { name: 'x' }, spec: { finalizers: [] }, status: { phase: 'Active' } };
  t.deepEqual(nsType.validateUpdate!(next, old), []);
  t.deepEqual(next.spec, { finalizers: ['svc'] });
});

test('spec finalizers must be standard or qualified', (t) => {
  const o: KObject = { metadata: { name: 'x' }, spec: { finalizers: ['bogus'] } };
  const causes = nsType.validate!(o);
  t.deepEqual(causes.map((c) => [c.field, c.message]), [['spec.finalizers', 'Invalid value: "bogus": name is neither a standard finalizer name nor is it fully qualified']]);
});

test('status phase must follow deletionTimestamp when it changes', (t) => {
  const old: KObject = { metadata: { name: 'x' }, status: { phase: 'Active' } };
  const next: KObject = { metadata: { name: 'x' }, status: { phase: 'Terminating' } };
  t.deepEqual(nsType.validate!(next, old).map((c) => c.field), ['status.Phase']);
  next.metadata.deletionTimestamp = ago(0);
  t.deepEqual(nsType.validate!(next, old), []);
});

test('table, field selectors, metadata', (t) => {
  const o: KObject = { metadata: { name: 'x', creationTimestamp: ago(45_000) }, status: { phase: 'Active' } };
  t.deepEqual(cells(nsType, o), { Status: 'Active', Age: '45s' });
  t.is(nsType.fieldSelectors!['status.phase'](o), 'Active');
  t.is(nsType.fieldSelectors!.name(o), 'x');
  t.false(nsType.namespaced);
  t.deepEqual(nsType.shortNames, ['ns']);
});

test('deletion strategy: spec.finalizers hold a deleted namespace, it turns Terminating, an update never removes it', (t) => {
  const d = nsType.deletion!;
  t.true(d.holdsDeletion!({ metadata: { name: 'x' }, spec: { finalizers: ['svc'] } }));
  t.false(d.holdsDeletion!({ metadata: { name: 'x' }, spec: { finalizers: [] } }));
  t.false(d.holdsDeletion!({ metadata: { name: 'x' } }));
  const o: KObject = { metadata: { name: 'x' } };
  d.markTerminating!(o);
  t.deepEqual(o.status, { phase: 'Terminating' });
  const withConditions: KObject = { metadata: { name: 'x' }, status: { phase: 'Active', conditions: [] } };
  d.markTerminating!(withConditions);
  t.deepEqual(withConditions.status, { phase: 'Terminating', conditions: [] });
  t.false(d.deleteWhenFinalized!({ metadata: { name: 'x', deletionTimestamp: '2025-01-01T00:00:00Z' } }));
  t.is(typeof d.defaultGracePeriodSeconds, 'undefined');
});
