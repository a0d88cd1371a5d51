import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { localPathStorageClass, localPathVolume } from '../../../../apiserver/controllers/local-path-provisioner';
import { isDefaultClass } from '../../../../apiserver/registry/types/storage-common';
import { makeStorageClassType } from '../../../../apiserver/registry/types/storageclasses';
import { persistentVolumeType } from '../../../../apiserver/registry/types/persistentvolumes';

const claim = (spec: Record<string, unknown> = {}): KObject => ({
  metadata: { name: 'www-web-0', namespace: 'shop', uid: 'abc-123' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, storageClassName: 'local-path', ...spec },
});
const node: KObject = { metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1-host', 'svc.io/hostname': 'n1-host' } } };

test('the local-path class: default, WaitForFirstConsumer, Delete, and valid', (t) => {
  const sc = localPathStorageClass();
  t.true(isDefaultClass(sc));
  t.is(sc.volumeBindingMode, 'WaitForFirstConsumer');
  t.is(sc.reclaimPolicy, 'Delete');
  t.deepEqual(makeStorageClassType().validate!(sc), []);
});

test('a provisioned volume: hostPath under the base dir, pinned to the node, pre-bound, with the cleanup finalizer', (t) => {
  const made = localPathVolume(claim(), localPathStorageClass(), node);
  if ('error' in made) return t.fail(made.error);
  const { pv } = made;
  t.is(pv.metadata.name, 'pvc-abc-123');
  t.deepEqual(pv.metadata.finalizers, ['svc.io/local-path-cleanup']);
  t.deepEqual(pv.metadata.annotations, { 'pv.svc.io/provisioned-by': 'svc.io/local-path' });
  t.deepEqual(pv.metadata.labels, { 'local-path.svc.io/node': 'n1' });
  t.deepEqual((pv.spec as any).hostPath, { path: '/var/lib/svc-node/local-path/pvc-abc-123_shop_www-web-0', type: 'DirectoryOrCreate' });
  t.deepEqual((pv.spec as any).nodeAffinity.required.nodeSelectorTerms, [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1-host'] }] }]);
  t.deepEqual((pv.spec as any).claimRef, { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'shop', name: 'www-web-0', uid: 'abc-123' });
  t.is((pv.spec as any).persistentVolumeReclaimPolicy, 'Delete');
  t.deepEqual((pv.spec as any).capacity, { storage: '2Gi' });
  persistentVolumeType.defaults!(pv);
  t.deepEqual(persistentVolumeType.validate!(pv), []);
});

test('the class nodePath parameter moves the base dir; without a hostname label the node is named by field', (t) => {
  const sc = { ...localPathStorageClass(), parameters: { nodePath: '/srv/volumes' }, reclaimPolicy: 'Retain' };
  const made = localPathVolume(claim(), sc, { metadata: { name: 'bare' } });
  if ('error' in made) return t.fail(made.error);
  t.is((made.pv.spec as any).hostPath.path, '/srv/volumes/pvc-abc-123_shop_www-web-0');
  t.is((made.pv.spec as any).persistentVolumeReclaimPolicy, 'Retain');
  t.deepEqual((made.pv.spec as any).nodeAffinity.required.nodeSelectorTerms, [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['bare'] }] }]);
});

test('claims the provisioner cannot serve say why', (t) => {
  const err = (c: KObject, sc = localPathStorageClass()) => {
    const r = localPathVolume(c, sc, node);
    return 'error' in r ? r.error : '';
  };
  t.regex(err(claim({ accessModes: ['ReadWriteMany'] })), /access modes ReadWriteMany are not supported/);
  t.regex(err(claim({ volumeMode: 'Block' })), /volumeMode Block is not supported/);
  t.regex(err(claim({ selector: { matchLabels: { a: 'b' } } })), /selector is not supported/);
  t.regex(err(claim(), { ...localPathStorageClass(), parameters: { nodePath: 'relative/dir' } }), /must be an absolute path/);
});
