/**
 * Server-side apply conformance, in process (issue 18): ownership. Each expected managedFields
 * is what upstream writes for the same sequence, from its documented examples (the server-side
 * apply page's test-cm, the apply integration tests' expectations): entries sorted by operation,
 * time, manager; Update entries carry their API version; conflicts worded as kube-apiserver's.
 */
import test from 'ava';
import { apply, applyError, get, managedFields, mergePatch, T, tick, withStore } from './apply-fixture';

const testCm = (value: string) => `
apiVersion: v1
kind: ConfigMap
metadata:
  name: test-cm
  namespace: default
  labels:
    test-label: test
data:
  key: ${value}
`;

const applied = (manager: string, time: string, fieldsV1: unknown) => ({ manager, operation: 'Apply', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1 });
const updated = (manager: string, time: string, fieldsV1: unknown) => ({ manager, operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1 });

test('apply creates the object and records one Apply entry with the applied fields (the documented test-cm)', (t) =>
  withStore(async (f) => {
    const cm = await apply(f, testCm('value'), 'apply_test');
    t.deepEqual(cm.data, { key: 'value' });
    t.deepEqual(cm.metadata.labels, { 'test-label': 'test' });
    t.truthy(cm.metadata.uid);
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [applied('apply_test', T(0), { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } })]);
  }));

test('an update that changes an applied field takes it; applying the old value again is a 409 naming the updater; force takes it back', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { key: 'new value' } }, 'updater');
    // Upstream's TestApplyManagedFields.
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [
      applied('apply_test', T(0), { 'f:metadata': { 'f:labels': { 'f:test-label': {} } } }),
      updated('updater', T(1), { 'f:data': { 'f:key': {} } }),
    ]);
    const err = await applyError(f, testCm('value'), 'apply_test');
    t.is(err.code, 409);
    t.is(err.reason, 'Conflict');
    t.is(err.message, 'Apply failed with 1 conflict: conflict with "updater" using v1: .data.key');
    t.deepEqual(err.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "updater" using v1', field: '.data.key' }] });
    t.is((await get(f, 'ConfigMap', 'test-cm')).data.key, 'new value');
    await tick(f);
    const forced = await apply(f, testCm('value'), 'apply_test', { force: true });
    t.is(forced.data.key, 'value');
    // The updater owned nothing else: its entry is gone.
    t.deepEqual(forced.metadata.managedFields, [applied('apply_test', T(2), { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } })]);
  }));

test('two appliers of the same value share the field; a third with another value conflicts with both', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'one');
    await tick(f);
    await apply(f, testCm('value'), 'two');
    const both = { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } };
    // The second apply changed nothing in the object: its new entry has no time (upstream sets it only when the object changes).
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [{ manager: 'two', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: both }, applied('one', T(0), both)]);
    const err = await applyError(f, testCm('other'), 'three');
    t.is(err.message, 'Apply failed with 2 conflicts: conflicts with "one":\n- .data.key\nconflicts with "two":\n- .data.key');
    t.deepEqual(
      err.details?.causes?.map((c) => [c.message, c.field]),
      [
        ['conflict with "one"', '.data.key'],
        ['conflict with "two"', '.data.key'],
      ],
    );
  }));

test('re-applying the same configuration writes nothing: same resourceVersion, same entry time', (t) =>
  withStore(async (f) => {
    const first = await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    const again = await apply(f, testCm('value'), 'apply_test');
    t.is(again.metadata.resourceVersion, first.metadata.resourceVersion);
    t.deepEqual(again.metadata.managedFields, first.metadata.managedFields);
  }));

test('an apply that changes a field it owns alone is no conflict, and updates its entry time', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    const changed = await apply(f, testCm('changed'), 'apply_test');
    t.is(changed.data.key, 'changed');
    t.is(changed.metadata.managedFields?.[0].time, T(1));
  }));

test('an update takes only what it changed; the fields it wrote unchanged stay with their owners', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { key: 'value', other: 'x' }, metadata: { labels: { 'test-label': 'test' } } }, 'kubectl-edit');
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [
      applied('apply_test', T(0), { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } }),
      updated('kubectl-edit', T(1), { 'f:data': { 'f:other': {} } }),
    ]);
  }));

test('an Update entry per manager and API version, merged across writes; a write that takes nothing keeps the entry time', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { a: '1' } }, 'ctl');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { b: '2' } }, 'ctl');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { b: '2' } }, 'ctl');
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [
      applied('apply_test', T(0), { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:test-label': {} } } }),
      updated('ctl', T(2), { 'f:data': { 'f:a': {}, 'f:b': {} } }),
    ]);
  }));

test('a field removed by an update is owned by nobody', (t) =>
  withStore(async (f) => {
    await apply(f, testCm('value'), 'apply_test');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'test-cm', { data: { key: null } }, 'cleaner');
    t.deepEqual(await managedFields(f, 'ConfigMap', 'test-cm'), [applied('apply_test', T(0), { 'f:metadata': { 'f:labels': { 'f:test-label': {} } } })]);
  }));

test('an apply that sets only name and namespace owns nothing: no managedFields at all (upstream strips them)', (t) =>
  withStore(async (f) => {
    const cm = await apply(f, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bare', namespace: 'default' } }, 'apply_test');
    t.is(cm.metadata.managedFields, undefined);
  }));

test('a conflict with an applier names it without a version; several paths of one manager are listed under it', (t) =>
  withStore(async (f) => {
    await apply(f, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } }, 'first');
    const err = await applyError(f, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'x', b: 'y' } }, 'second');
    t.is(err.message, 'Apply failed with 2 conflicts: conflicts with "first":\n- .data.a\n- .data.b');
    t.deepEqual(err.details?.causes?.[0], { reason: 'FieldManagerConflict', message: 'conflict with "first"', field: '.data.a' });
  }));
