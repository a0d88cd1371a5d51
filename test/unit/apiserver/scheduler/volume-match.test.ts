import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { podVolumes, PV_NOT_EXIST, UNBOUND_IMMEDIATE, volumeBindingFilter, type VolumeLister } from '../../../../apiserver/scheduler/volume-binding';
import { findMatchingVolume, NO_VOLUME_TO_BIND, VOLUME_NODE_AFFINITY_CONFLICT } from '../../../../apiserver/scheduler/volume-match';
import type { NodeInfo, PodInfo } from '../../../../apiserver/scheduler/node-info';

function pv(name: string, size: string, extra: Record<string, unknown> = {}, meta: Partial<KObject['metadata']> = {}): KObject {
  const { phase = 'Available', ...spec } = extra as { phase?: string };
  return {
    metadata: { name, ...meta },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', volumeMode: 'Filesystem', hostPath: { path: `/d/${name}` }, ...spec },
    status: { phase },
  };
}
function claim(extra: Record<string, unknown> = {}, meta: Partial<KObject['metadata']> = {}): KObject {
  return {
    metadata: { name: 'data', namespace: 'default', uid: 'u1', ...meta },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual', volumeMode: 'Filesystem', ...extra },
  };
}
const node = (name: string): KObject => ({ metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
const pinned = (n: string) => ({ nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [n] }] }] } } });

const cases: Array<{ name: string; claim: KObject; volumes: KObject[]; node?: KObject; delay?: boolean; want: string | undefined }> = [
  { name: 'the smallest volume that fits', claim: claim(), volumes: [pv('big', '10Gi'), pv('small', '2Gi'), pv('tiny', '500Mi')], want: 'small' },
  { name: 'exact size fits', claim: claim(), volumes: [pv('exact', '1024Mi')], want: 'exact' },
  { name: 'another class does not match', claim: claim(), volumes: [pv('fast', '5Gi', { storageClassName: 'fast' })], want: undefined },
  { name: 'no class on both sides matches', claim: claim({ storageClassName: '' }), volumes: [pv('none', '5Gi', { storageClassName: '' })], want: 'none' },
  { name: 'access modes: the volume must offer all', claim: claim({ accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }), volumes: [pv('rwo', '5Gi'), pv('both', '8Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] })], want: 'both' },
  { name: 'volumeMode must agree', claim: claim({ volumeMode: 'Block' }), volumes: [pv('fs', '5Gi')], want: undefined },
  { name: 'selector matches labels', claim: claim({ selector: { matchLabels: { tier: 'gold' } } }), volumes: [pv('plain', '2Gi'), pv('gold', '5Gi', {}, { labels: { tier: 'gold' } })], want: 'gold' },
  { name: 'a volume bound to another claim is skipped', claim: claim(), volumes: [pv('taken', '2Gi', { claimRef: { namespace: 'default', name: 'other', uid: 'u2' }, phase: 'Bound' })], want: undefined },
  { name: 'a volume pre-bound to this claim wins over a smaller one', claim: claim(), volumes: [pv('small', '1Gi'), pv('mine', '9Gi', { claimRef: { namespace: 'default', name: 'data' } })], want: 'mine' },
  { name: 'a Released volume is not reused', claim: claim(), volumes: [pv('released', '2Gi', { phase: 'Released' })], want: undefined },
  { name: 'a terminating volume is skipped', claim: claim(), volumes: [pv('going', '2Gi', {}, { deletionTimestamp: '2025-01-01T00:00:00Z' })], want: undefined },
  { name: 'too small', claim: claim(), volumes: [pv('tiny', '100Mi')], want: undefined },
  { name: 'delayed binding without a node: nothing', claim: claim(), volumes: [pv('any', '2Gi')], delay: true, want: undefined },
  { name: 'delayed binding on a node: only volumes it reaches', claim: claim(), volumes: [pv('n2', '2Gi', pinned('n2')), pv('n1', '5Gi', pinned('n1'))], node: node('n1'), delay: true, want: 'n1' },
];

for (const c of cases) {
  test(`findMatchingVolume: ${c.name}`, (t) => {
    t.is(findMatchingVolume(c.claim, c.volumes, { delayBinding: c.delay ?? false, ...(c.node ? { node: c.node } : {}) })?.metadata.name, c.want);
  });
}

function lister(claims: KObject[], volumes: KObject[], classes: KObject[]): VolumeLister {
  return {
    claim: (ns, name) => claims.find((c) => c.metadata.namespace === ns && c.metadata.name === name),
    volume: (name) => volumes.find((v) => v.metadata.name === name),
    storageClass: (name) => classes.find((c) => c.metadata.name === name),
    volumes: () => volumes,
  };
}
const pod: KObject = { metadata: { name: 'p', namespace: 'default' }, spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } };
const info = (n: KObject) => ({ node: n, name: n.metadata.name }) as NodeInfo;
const wffc: KObject = { metadata: { name: 'local-path' }, provisioner: 'svc.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' };
const immediate: KObject = { metadata: { name: 'manual' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'Immediate' };

test('podVolumes: missing, terminating and unbound Immediate claims keep the pod off every node', (t) => {
  t.is(podVolumes(pod, lister([], [], [])), 'persistentvolumeclaim "data" not found');
  t.is(podVolumes(pod, lister([claim({}, { deletionTimestamp: '2025-01-01T00:00:00Z' })], [], [])), 'persistentvolumeclaim "data" is being deleted');
  t.is(podVolumes(pod, lister([claim()], [], [immediate])), UNBOUND_IMMEDIATE);
  t.is(podVolumes(pod, lister([claim({ storageClassName: '' })], [], [])), UNBOUND_IMMEDIATE);
});

test('volume filter: a bound volume pins the pod to the nodes it reaches', (t) => {
  const bound = claim({ volumeName: 'pv1' });
  const l = lister([bound], [pv('pv1', '1Gi', pinned('n1'))], []);
  const v = podVolumes(pod, l);
  if (typeof v === 'string') return t.fail(v);
  const f = volumeBindingFilter(v, l);
  t.deepEqual(f({} as PodInfo, info(node('n1'))), []);
  t.deepEqual(f({} as PodInfo, info(node('n2'))), [VOLUME_NODE_AFFINITY_CONFLICT]);
  const gone = lister([bound], [], []);
  const v2 = podVolumes(pod, gone);
  if (typeof v2 === 'string') return t.fail(v2);
  t.deepEqual(volumeBindingFilter(v2, gone)({} as PodInfo, info(node('n1'))), [PV_NOT_EXIST]);
});

test('volume filter: a WaitForFirstConsumer claim goes where a volume fits or its class can provision', (t) => {
  const c = claim({ storageClassName: 'local-path' });
  const l = lister([c], [], [wffc]);
  const v = podVolumes(pod, l);
  if (typeof v === 'string') return t.fail(v);
  t.deepEqual(volumeBindingFilter(v, l)({} as PodInfo, info(node('n1'))), []);
  const noProvisioner = { ...wffc, provisioner: 'kubernetes.io/no-provisioner' };
  const statics = lister([c], [pv('s', '5Gi', { storageClassName: 'local-path', ...pinned('n2') })], [noProvisioner]);
  const v2 = podVolumes(pod, statics);
  if (typeof v2 === 'string') return t.fail(v2);
  t.deepEqual(volumeBindingFilter(v2, statics)({} as PodInfo, info(node('n1'))), [NO_VOLUME_TO_BIND]);
  t.deepEqual(volumeBindingFilter(v2, statics)({} as PodInfo, info(node('n2'))), []);
  const topo = lister([c], [], [{ ...wffc, allowedTopologies: [{ matchLabelExpressions: [{ key: 'kubernetes.io/hostname', values: ['n2'] }] }] }]);
  const v3 = podVolumes(pod, topo);
  if (typeof v3 === 'string') return t.fail(v3);
  t.deepEqual(volumeBindingFilter(v3, topo)({} as PodInfo, info(node('n1'))), [NO_VOLUME_TO_BIND]);
});
