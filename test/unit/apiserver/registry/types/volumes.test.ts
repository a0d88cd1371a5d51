import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makePersistentVolumeClaimType } from '../../../../../apiserver/registry/types/persistentvolumeclaims';
import { makePersistentVolumeType } from '../../../../../apiserver/registry/types/persistentvolumes';
import { ago, cells, fields, now } from './fixtures';

const pvType = makePersistentVolumeType(now);
const pvcType = makePersistentVolumeClaimType(now);

function pv(spec: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'pv-1', creationTimestamp: ago(3600_000) },
    spec: { capacity: { storage: '10240Mi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], hostPath: { path: '/data' }, ...spec },
  };
}

function pvc(spec: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'data', namespace: 'default', creationTimestamp: ago(90_000) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  };
}

test('PV defaults: Retain, Filesystem, phase Pending, canonical capacity', (t) => {
  const o = pv();
  pvType.defaults!(o);
  t.is((o.spec as any).persistentVolumeReclaimPolicy, 'Retain');
  t.is((o.spec as any).volumeMode, 'Filesystem');
  t.deepEqual((o.spec as any).capacity, { storage: '10Gi' });
  t.deepEqual(o.status, { phase: 'Pending' });
  t.deepEqual(pvType.validate!(o), []);
});

test('PV validation: access modes, capacity, exactly one source', (t) => {
  const o = pv({ accessModes: [], capacity: { cpu: '1' }, nfs: { server: 'x', path: '/' } });
  pvType.defaults!(o);
  const causes = pvType.validate!(o);
  t.deepEqual(fields(causes), ['spec.accessModes', 'spec.capacity', 'spec.nfs']);
  t.is(causes[2].message, 'Forbidden: may not specify more than 1 volume type');
  const none = pv({ hostPath: undefined, accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'Sideways'] });
  pvType.defaults!(none);
  t.deepEqual(fields(pvType.validate!(none)), ['spec.accessModes[2]', 'spec.accessModes', 'spec']);
});

test('PV update: the volume source is immutable', (t) => {
  const old = pv();
  pvType.defaults!(old);
  const next = pv({ hostPath: { path: '/other' } });
  pvType.defaults!(next);
  const [c] = pvType.validateUpdate!(next, old);
  t.is(c.field, 'spec.persistentvolumesource');
  t.true(c.message.startsWith('Forbidden: spec.persistentvolumesource is immutable after creation'));
});

test('PV table', (t) => {
  const o = pv({ claimRef: { namespace: 'default', name: 'data' }, storageClassName: 'local' });
  pvType.defaults!(o);
  (o.status as any).phase = 'Bound';
  t.deepEqual(cells(pvType, o), {
    Capacity: '10Gi',
    'Access Modes': 'RWO,ROX',
    'Reclaim Policy': 'Retain',
    Status: 'Bound',
    Claim: 'default/data',
    StorageClass: 'local',
    VolumeAttributesClass: '<unset>',
    Reason: '',
    Age: '60m',
    VolumeMode: 'Filesystem',
  });
});

test('PVC defaults and validation', (t) => {
  const o = pvc();
  pvcType.defaults!(o);
  t.deepEqual(o.status, { phase: 'Pending' });
  t.is((o.spec as any).volumeMode, 'Filesystem');
  t.deepEqual(pvcType.validate!(o), []);
  const bad = pvc({ accessModes: [], resources: {}, storageClassName: 'Bad_Class', selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } });
  pvcType.defaults!(bad);
  const causes = pvcType.validate!(bad);
  t.deepEqual(fields(causes), ['spec.accessModes', 'spec.selector.matchExpressions[0].values', 'spec.resources[storage]', 'spec.storageClassName']);
  t.is(causes[0].message, 'Required value: at least 1 access mode is required');
});

test('PVC update: volumeName may be set once; bound claims may grow, never shrink', (t) => {
  const old = pvc();
  pvcType.defaults!(old);
  const bind = structuredClone(old);
  (bind.spec as any).volumeName = 'pv-1';
  t.deepEqual(pvcType.validateUpdate!(bind, old), []);
  const bound = structuredClone(bind);
  (bound.status as any).phase = 'Bound';
  const grow = structuredClone(bound);
  (grow.spec as any).resources.requests.storage = '2Gi';
  t.deepEqual(pvcType.validateUpdate!(grow, bound), []);
  const shrink = structuredClone(bound);
  (shrink.spec as any).resources.requests.storage = '512Mi';
  t.deepEqual(fields(pvcType.validateUpdate!(shrink, bound)), ['spec.resources.requests.storage']);
  const modes = structuredClone(bound);
  (modes.spec as any).accessModes = ['ReadWriteMany'];
  const [c] = pvcType.validateUpdate!(modes, bound);
  t.is(c.field, 'spec');
  t.true(c.message.includes('spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
});

test('PVC table shows capacity and modes only once bound', (t) => {
  const o = pvc();
  pvcType.defaults!(o);
  t.deepEqual(cells(pvcType, o), {
    Status: 'Pending',
    Volume: '',
    Capacity: '',
    'Access Modes': '',
    StorageClass: '',
    VolumeAttributesClass: '<unset>',
    Age: '90s',
    VolumeMode: 'Filesystem',
  });
  (o.spec as any).volumeName = 'pv-1';
  o.status = { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] };
  const c = cells(pvcType, o);
  t.deepEqual([c.Status, c.Volume, c.Capacity, c['Access Modes']], ['Bound', 'pv-1', '10Gi', 'RWO']);
  o.metadata.deletionTimestamp = ago(0);
  t.is(cells(pvcType, o).Status, 'Terminating');
});

test('PVC update: a claim naming no class may be given one while unbound (retroactive default class), never changed', (t) => {
  const old = pvc();
  pvcType.defaults!(old);
  const named = structuredClone(old);
  (named.spec as any).storageClassName = 'local-path';
  t.deepEqual(pvcType.validateUpdate!(named, old), []);
  const changed = structuredClone(named);
  (changed.spec as any).storageClassName = 'other';
  t.is(pvcType.validateUpdate!(changed, named)[0]?.field, 'spec');
  const bound = structuredClone(old);
  (bound.spec as any).volumeName = 'pv-1';
  const boundNamed = structuredClone(bound);
  (boundNamed.spec as any).storageClassName = 'local-path';
  t.is(pvcType.validateUpdate!(boundNamed, bound)[0]?.field, 'spec');
  const annotated = pvc();
  annotated.metadata.annotations = { 'volume.beta.kubernetes.io/storage-class': 'gold' };
  const annotatedNamed = structuredClone(annotated);
  (annotatedNamed.spec as any).storageClassName = 'local-path';
  t.is(pvcType.validateUpdate!(annotatedNamed, annotated)[0]?.field, 'spec');
});
