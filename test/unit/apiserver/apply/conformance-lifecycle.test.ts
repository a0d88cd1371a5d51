/**
 * Server-side apply conformance, in process (issue 18): what happens to fields over time —
 * removal (with defaults back), shared fields, fields taken by controllers, resetting
 * managedFields, untracked objects, the status sub-resource, the upgrade from client-side apply,
 * and the cap on Update entries — with the managedFields upstream writes.
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { apply, applyError, get, managedFields, mergePatch, T, tick, withStore } from './apply-fixture';
import { ctx } from '../store/fixture';

const service = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ name: 'a', port: 1 }], ...spec } });
const cm = (data: Record<string, string>, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', ...extra }, data });

test('a field the applier drops and nobody else owns is removed; a defaulted one gets its default back', (t) =>
  withStore(async (f) => {
    await apply(f, service({ sessionAffinity: 'ClientIP', publishNotReadyAddresses: true }), 'apply_test');
    t.is((await get(f, 'Service', 's')).spec.sessionAffinity, 'ClientIP');
    await apply(f, service({}), 'apply_test');
    const s = await get(f, 'Service', 's');
    t.is(s.spec.sessionAffinity, 'None');
    t.is(s.spec.publishNotReadyAddresses, undefined);
  }));

test('a field the applier drops stays while another applier owns it', (t) =>
  withStore(async (f) => {
    for (const m of ['shared_owner_1', 'shared_owner_2']) await apply(f, service({ sessionAffinity: 'ClientIP', publishNotReadyAddresses: true }), m);
    await apply(f, service({}), 'shared_owner_1');
    const s = await get(f, 'Service', 's');
    t.is(s.spec.sessionAffinity, 'ClientIP');
    t.is(s.spec.publishNotReadyAddresses, true);
  }));

test('a field a controller took by update stays when the applier drops it', (t) =>
  withStore(async (f) => {
    await apply(f, service({ externalIPs: ['192.0.2.1'] }), 'test_applier');
    await mergePatch(f, 'Service', 's', { spec: { externalIPs: ['192.0.2.9'] } }, 'test_updater');
    await apply(f, service({}), 'test_applier');
    t.deepEqual((await get(f, 'Service', 's')).spec.externalIPs, ['192.0.2.9']);
  }));

test('an element the applier drops goes, even with a field a controller set in it', (t) =>
  withStore(async (f) => {
    await apply(f, service({}), 'test_applier');
    await mergePatch(f, 'Service', 's', { spec: { ports: [{ name: 'a', port: 1, protocol: 'TCP', targetPort: 8080 }] } }, 'test_updater');
    await apply(f, service({ ports: [{ name: 'c', port: 3 }] }), 'test_applier');
    t.deepEqual(
      (await get(f, 'Service', 's')).spec.ports.map((p: any) => p.name),
      ['c'],
    );
  }));

test('managedFields [{}] in a non-apply write resets them; the writer owns what else it changed; [] resets nothing', (t) =>
  withStore(async (f) => {
    await apply(f, cm({ key: 'value' }, { labels: { l: 'x' } }), 'apply_test');
    await tick(f);
    // An empty list is not a reset (Appendix C): the stored managedFields stay.
    await mergePatch(f, 'ConfigMap', 'c', { metadata: { managedFields: [] } }, 'clearer');
    t.is((await managedFields(f, 'ConfigMap', 'c')).length, 1);
    await mergePatch(f, 'ConfigMap', 'c', { metadata: { managedFields: [{}], labels: { added: 'y' } } }, 'resetter');
    t.deepEqual(await managedFields(f, 'ConfigMap', 'c'), [
      { manager: 'resetter', operation: 'Update', apiVersion: 'v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:added': {} } } } },
    ]);
    // A reset that changes nothing else leaves none (upstream strips them), through PUT too.
    const t2 = f.type('configmaps');
    await f.store.update(t2, 'default', 'c', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, managedFields: [{}] } }), ctx({ fieldManager: 'resetter' }));
    t.is(await managedFields(f, 'ConfigMap', 'c'), undefined);
  }));

test('an object without managedFields stays untracked by updates; its first apply gives what it holds to before-first-apply', (t) =>
  withStore(async (f) => {
    await apply(f, cm({ key: 'value' }, { labels: { l: 'x' } }), 'apply_test');
    await mergePatch(f, 'ConfigMap', 'c', { metadata: { managedFields: [{}] } }, 'resetter');
    await tick(f);
    await mergePatch(f, 'ConfigMap', 'c', { data: { other: 'o' } }, 'updater');
    t.is(await managedFields(f, 'ConfigMap', 'c'), undefined);
    await tick(f);
    await apply(f, cm({ key: 'value', extra: 'e' }), 'applier');
    t.deepEqual(await managedFields(f, 'ConfigMap', 'c'), [
      { manager: 'applier', operation: 'Apply', apiVersion: 'v1', time: T(2), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:extra': {}, 'f:key': {} } } },
      {
        manager: 'before-first-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: T(2),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:key': {}, 'f:other': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
      },
    ]);
    const err = await applyError(f, cm({ other: 'changed' }), 'applier');
    t.is(err.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.other');
  }));

const podWithStatus = (phase: string): KObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'i' }] }, status: { phase } });

test('the status sub-resource has its own entries; the main resource neither owns nor changes status', (t) =>
  withStore(async (f) => {
    await apply(f, podWithStatus('Failed'), 'creator');
    const created = await get(f, 'Pod', 'p');
    t.not(created.status?.phase, 'Failed');
    t.deepEqual(Object.keys(created.metadata.managedFields[0].fieldsV1), ['f:spec']);
    await tick(f);
    await apply(f, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Running' } }, 'kubelet', { subresource: 'status' });
    await tick(f);
    await mergePatch(f, 'Pod', 'p', { status: { message: 'hello' } }, 'agent', 'status');
    const p = await get(f, 'Pod', 'p');
    t.is(p.status.phase, 'Running');
    t.deepEqual(p.metadata.managedFields.slice(1), [
      { manager: 'kubelet', operation: 'Apply', apiVersion: 'v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:phase': {} } }, subresource: 'status' },
      { manager: 'agent', operation: 'Update', apiVersion: 'v1', time: T(2), fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:message': {} } }, subresource: 'status' },
    ]);
    const err = await applyError(f, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status: { phase: 'Succeeded' } }, 'other', { subresource: 'status' });
    t.is(err.message, 'Apply failed with 1 conflict: conflict with "kubelet" with subresource "status": .status.phase');
  }));

test('kubectl’s first server-side apply takes over what client-side apply applied; the annotation follows what it applies', (t) =>
  withStore(async (f) => {
    const last = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { key: 'value' } };
    const annotation = 'kubectl.kubernetes.io/last-applied-configuration';
    const t2 = f.type('configmaps');
    await f.store.create(t2, 'default', { ...structuredClone(last), metadata: { ...last.metadata, annotations: { [annotation]: JSON.stringify(last) + '\n' } } }, ctx({ fieldManager: 'kubectl-client-side-apply' }));
    // Another manager name does not upgrade: the client-side applied value conflicts.
    const err = await applyError(f, cm({ key: 'server-side' }), 'my-tool');
    t.is(err.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key');
    await tick(f);
    const upgraded = await apply(f, cm({ key: 'server-side' }), 'kubectl');
    t.is(upgraded.data.key, 'server-side');
    t.deepEqual(upgraded.metadata.managedFields, [
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: T(1), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:key': {} } } },
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: T(0),
        fieldsType: 'FieldsV1',
        // It keeps the data map itself (a field with nothing below it left is written {}, as upstream).
        fieldsV1: { 'f:data': {}, 'f:metadata': { 'f:annotations': { '.': {}, [`f:${annotation}`]: {} } } },
      },
    ]);
    // Kept in step with the applied configuration, so that client-side apply can come back to it.
    t.is(upgraded.metadata.annotations[annotation], '{"apiVersion":"v1","data":{"key":"server-side"},"kind":"ConfigMap","metadata":{"name":"c"}}\n');
  }));

test('at most 10 Update entries: the oldest are merged into ancient-changes', (t) =>
  withStore(async (f) => {
    await apply(f, cm({ key: 'value' }), 'apply_test');
    for (let i = 0; i < 11; i++) {
      await tick(f);
      await mergePatch(f, 'ConfigMap', 'c', { data: { [`k${i}`]: 'v' } }, `updater-${i}`);
    }
    const mf = await managedFields(f, 'ConfigMap', 'c');
    t.is(mf.length, 11);
    const ancient = mf.find((e: any) => e.manager === 'ancient-changes');
    t.deepEqual(ancient, { manager: 'ancient-changes', operation: 'Update', apiVersion: 'v1', time: T(2), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k0': {}, 'f:k1': {} } } });
    t.deepEqual(
      mf.filter((e: any) => e.operation === 'Update').map((e: any) => e.manager),
      ['ancient-changes', ...Array.from({ length: 9 }, (_, i) => `updater-${i + 2}`)],
    );
  }));

test('dry run answers the applied object and stores nothing', (t) =>
  withStore(async (f) => {
    const dry = await apply(f, cm({ key: 'value' }), 'apply_test', { dryRun: true });
    t.is(dry.data.key, 'value');
    t.is(dry.metadata.managedFields[0].manager, 'apply_test');
    await t.throwsAsync(get(f, 'ConfigMap', 'c'), { message: /not found/ });
  }));
