import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeCsiDriverType } from '../../../../../apiserver/registry/types/csidrivers';
import { makeCsiNodeType } from '../../../../../apiserver/registry/types/csinodes';
import { isDefaultClass } from '../../../../../apiserver/registry/types/storage-common';
import { makeStorageClassType } from '../../../../../apiserver/registry/types/storageclasses';
import { makeVolumeAttachmentType } from '../../../../../apiserver/registry/types/volumeattachments';
import { ago, cells, fields, now } from './fixtures';

const scType = makeStorageClassType(now);
const driverType = makeCsiDriverType(now);
const nodeType = makeCsiNodeType(now);
const vaType = makeVolumeAttachmentType(now);

function sc(extra: Record<string, unknown> = {}): KObject {
  const o: KObject = { metadata: { name: 'fast', creationTimestamp: ago(60_000) }, provisioner: 'svc.io/local-path', ...extra };
  scType.defaults!(o);
  return o;
}

test('StorageClass defaults: reclaimPolicy Delete, volumeBindingMode Immediate', (t) => {
  const o = sc();
  t.is(o.reclaimPolicy, 'Delete');
  t.is(o.volumeBindingMode, 'Immediate');
  t.deepEqual(scType.validate!(o), []);
  t.deepEqual(cells(scType, o), { Provisioner: 'svc.io/local-path', ReclaimPolicy: 'Delete', VolumeBindingMode: 'Immediate', AllowVolumeExpansion: 'false', Age: '60s' });
});

test('StorageClass validation: provisioner required and a qualified name, known policy and mode, topology terms', (t) => {
  const missing = sc({ provisioner: '' });
  const [c] = scType.validate!(missing);
  t.is(c.field, 'provisioner');
  t.is(c.reason, 'FieldValueRequired');
  const bad = sc({ provisioner: '-bad', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later', parameters: { '': 'x' }, allowedTopologies: [{ matchLabelExpressions: [] }] });
  const causes = scType.validate!(bad);
  t.deepEqual(fields(causes), ['provisioner', 'parameters', 'reclaimPolicy', 'volumeBindingMode', 'allowedTopologies[0].matchLabelExpressions']);
  t.is(causes[2].message, 'Unsupported value: "Recycle": supported values: "Delete", "Retain"');
  t.is(causes[3].message, 'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"');
});

test('StorageClass update: provisioner, parameters, reclaimPolicy and volumeBindingMode are immutable; mountOptions may change', (t) => {
  const old = sc({ parameters: { a: '1' } });
  t.deepEqual(scType.validateUpdate!(sc({ parameters: { a: '1' }, mountOptions: ['ro'] }), old), []);
  const next = sc({ provisioner: 'other.io/x', parameters: { a: '2' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' });
  const causes = scType.validateUpdate!(next, old);
  t.deepEqual(fields(causes), ['parameters', 'provisioner', 'reclaimPolicy', 'volumeBindingMode']);
  t.is(causes[0].message, 'Forbidden: updates to parameters are forbidden.');
  t.is(causes[1].message, 'Forbidden: updates to provisioner are forbidden.');
  t.is(causes[3].message, 'Invalid value: "WaitForFirstConsumer": field is immutable');
});

test('the default-class annotation counts in either spelling, with the value "true" only', (t) => {
  t.true(isDefaultClass({ metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } }));
  t.true(isDefaultClass({ metadata: { annotations: { 'storageclass.svc.io/is-default-class': 'true' } } }));
  t.false(isDefaultClass({ metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'True' } } }));
  t.false(isDefaultClass({ metadata: {} }));
  t.is(scType.tableName!(sc({ metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } })), 'local-path (default)');
  t.is(scType.tableName!(sc()), 'fast');
});

test('CSIDriver defaults and immutable attachRequired', (t) => {
  const o: KObject = { metadata: { name: 'csi.example.com' }, spec: {} };
  driverType.defaults!(o);
  t.deepEqual(o.spec, {
    attachRequired: true,
    podInfoOnMount: false,
    storageCapacity: false,
    fsGroupPolicy: 'ReadWriteOnceWithFSType',
    requiresRepublish: false,
    seLinuxMount: false,
    volumeLifecycleModes: ['Persistent'],
  });
  t.deepEqual(driverType.validate!(o), []);
  const next = structuredClone(o);
  (next.spec as any).attachRequired = false;
  (next.spec as any).podInfoOnMount = true;
  t.deepEqual(fields(driverType.validateUpdate!(next, o)), ['spec.attachRequired']);
  (next.spec as any).fsGroupPolicy = 'Sometimes';
  t.deepEqual(fields(driverType.validate!(next)), ['spec.fsGroupPolicy']);
});

test('CSINode: drivers need a unique name and a nodeID, which stays', (t) => {
  const o: KObject = { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'd', nodeID: 'x' }, { name: 'd', nodeID: '' }] } };
  t.deepEqual(fields(nodeType.validate!(o)), ['spec.drivers[1].name', 'spec.drivers[1].nodeID']);
  const old: KObject = { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'd', nodeID: 'x' }] } };
  t.deepEqual(fields(nodeType.validateUpdate!({ metadata: { name: 'n1' }, spec: { drivers: [{ name: 'd', nodeID: 'y' }] } }, old)), ['spec.drivers[0].nodeID']);
  t.deepEqual(cells(nodeType, old).Drivers, 1);
});

test('VolumeAttachment: attacher, exactly one source and nodeName; the spec never changes', (t) => {
  const o: KObject = { metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv1' }, nodeName: 'n1' } };
  t.deepEqual(vaType.validate!(o), []);
  t.deepEqual(fields(vaType.validate!({ metadata: { name: 'va' }, spec: { source: {} } })), ['spec.attacher', 'spec.source', 'spec.nodeName']);
  const next = structuredClone(o);
  (next.spec as any).nodeName = 'n2';
  t.deepEqual(fields(vaType.validateUpdate!(next, o)), ['spec']);
});
