import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { DefaultStorageClass } from '../../../../apiserver/admission/default-storage-class';
import type { KObject } from '../../../../apiserver/api/types';
import { persistentVolumeClaimType } from '../../../../apiserver/registry/types/persistentvolumeclaims';
import { podType } from '../../../../apiserver/registry/types/pods';

function claim(spec: Record<string, unknown>, annotations?: Record<string, string>): KObject {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'ns', annotations }, spec: { accessModes: ['ReadWriteOnce'], ...spec } };
}
function attrs(object: KObject, operation: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes {
  return { operation, type: persistentVolumeClaimType, namespace: 'ns', name: 'c', subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false };
}
function sc(name: string, created: string, isDefault: string | undefined, key = 'storageclass.kubernetes.io/is-default-class'): KObject {
  return { metadata: { name, creationTimestamp: created, annotations: isDefault === undefined ? {} : { [key]: isDefault } }, provisioner: 'x.io/p' };
}
const classOf = (a: AdmissionAttributes) => (a.object!.spec as { storageClassName?: string | null }).storageClassName;

const cases: Array<{ name: string; classes: KObject[]; spec: Record<string, unknown>; annotations?: Record<string, string>; want: unknown }> = [
  { name: 'the one default class is set', classes: [sc('a', '2025-01-01T00:00:00Z', 'true'), sc('b', '2025-01-02T00:00:00Z', undefined)], spec: {}, want: 'a' },
  { name: 'the svc.io spelling of the annotation counts', classes: [sc('a', '2025-01-01T00:00:00Z', 'true', 'storageclass.svc.io/is-default-class')], spec: {}, want: 'a' },
  { name: 'of several defaults, the newest', classes: [sc('old', '2025-01-01T00:00:00Z', 'true'), sc('new', '2025-02-01T00:00:00Z', 'true')], spec: {}, want: 'new' },
  { name: 'equally new defaults: the first by name', classes: [sc('b', '2025-01-01T00:00:00Z', 'true'), sc('a', '2025-01-01T00:00:00Z', 'true')], spec: {}, want: 'a' },
  { name: 'a value other than "true" is not default', classes: [sc('a', '2025-01-01T00:00:00Z', 'false')], spec: {}, want: undefined },
  { name: 'no default class: left unset', classes: [], spec: {}, want: undefined },
  { name: 'an explicit class is kept', classes: [sc('a', '2025-01-01T00:00:00Z', 'true')], spec: { storageClassName: 'gold' }, want: 'gold' },
  { name: 'an empty class (asking for none) is kept', classes: [sc('a', '2025-01-01T00:00:00Z', 'true')], spec: { storageClassName: '' }, want: '' },
  { name: 'the beta annotation counts as a class', classes: [sc('a', '2025-01-01T00:00:00Z', 'true')], spec: {}, annotations: { 'volume.beta.kubernetes.io/storage-class': 'gold' }, want: undefined },
];

for (const c of cases) {
  test(`DefaultStorageClass: ${c.name}`, async (t) => {
    const a = attrs(claim(c.spec, c.annotations));
    await new DefaultStorageClass(() => Promise.resolve(c.classes)).mutate(a);
    t.is(classOf(a), c.want as string | undefined);
  });
}

test('DefaultStorageClass: updates, other kinds and sub-resources are not touched, and classes are not even listed', async (t) => {
  let listed = 0;
  const plugin = new DefaultStorageClass(() => {
    listed++;
    return Promise.resolve([sc('a', '2025-01-01T00:00:00Z', 'true')]);
  });
  const update = attrs(claim({}), 'UPDATE');
  await plugin.mutate(update);
  t.is(classOf(update), undefined);
  const pod = { ...attrs({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} }), type: podType };
  await plugin.mutate(pod);
  t.deepEqual(pod.object!.spec, {});
  const status = { ...attrs(claim({})), subresource: 'status' };
  await plugin.mutate(status);
  t.is(classOf(status), undefined);
  t.is(listed, 0);
});
