import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { canonicalizeQuantities } from '../canonical-quantities';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { oneOf, resourceList } from '../common-validation';
import { child, forbidden, immutable, notSupported, required } from '../field-errors';
import { ensureRec, get, rec, str, strAt } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, obj, ptr, quantityMap, str as s, strEnum, time } from '../schema-builders';
import { nodeSelectorSchema } from './affinity-schema';
import { persistentVolumeSourceSchema } from './pv-source-schema';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { ACCESS_MODES, accessModeCauses, accessModesString, storageClassOf, VOLUME_MODES } from './pv-common';

/** core/v1 PersistentVolume. */

export const PV_SOURCES: readonly string[] = [
  'gcePersistentDisk', 'awsElasticBlockStore', 'hostPath', 'glusterfs', 'nfs', 'rbd', 'iscsi', 'cinder', 'cephfs',
  'fc', 'flocker', 'flexVolume', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk',
  'portworxVolume', 'scaleIO', 'local', 'storageos', 'csi',
];
const RECLAIM_POLICIES: readonly string[] = ['Delete', 'Recycle', 'Retain'];
export const PV_PHASES: readonly string[] = ['Pending', 'Available', 'Bound', 'Released', 'Failed'];

const V1 = 'k8s.io.api.core.v1';

/** core/v1 PersistentVolumeSpec; storage/v1 VolumeAttachmentSource.inlineVolumeSpec embeds it too. */
export const persistentVolumeSpecSchema = obj(
  `${V1}.PersistentVolumeSpec`,
  {
    capacity: [1, quantityMap('The persistent volume resources and capacity.')],
    accessModes: [3, atomicList(strEnum(ACCESS_MODES), 'All the ways the volume can be mounted.')],
    claimRef: [4, described('The claim bound to this volume, the other half of a bi-directional binding.', objectReferenceSchema)],
    persistentVolumeReclaimPolicy: [5, strEnum(RECLAIM_POLICIES, 'What happens to the volume when its claim is released: Retain (the default), Delete or Recycle.')],
    storageClassName: [6, s('Name of the StorageClass this volume belongs to; empty for none.')],
    mountOptions: [7, atomicList(s(), 'Mount options, such as ro or soft; not validated.')],
    volumeMode: [8, ptr(strEnum(VOLUME_MODES, 'Filesystem (the default) for a formatted filesystem, or Block for a raw block device.'))],
    nodeAffinity: [
      9,
      described(
        'Limits the nodes this volume can be reached from.',
        obj(`${V1}.VolumeNodeAffinity`, { required: [1, described('The nodes that can reach the volume.', nodeSelectorSchema)] }),
      ),
    ],
    volumeAttributesClassName: [10, ptr(s('Name of the VolumeAttributesClass this volume belongs to.'))],
  },
  // PersistentVolumeSource (field 2): exactly one of PV_SOURCES.
  { inline: [[2, persistentVolumeSourceSchema]] },
);

export const persistentVolumeSchema = withMeta(`${V1}.PersistentVolume`, {
  spec: [2, described('What the volume is and how it may be used, as set by the administrator.', persistentVolumeSpecSchema)],
  status: [
    3,
    described(
      'The most recently observed status of the volume; read-only.',
      obj(`${V1}.PersistentVolumeStatus`, {
        phase: [1, strEnum(PV_PHASES, 'Whether the volume is available, bound to a claim, released by a claim, or failed.')],
        message: [2, s('Human-readable message on why the volume is in this state.')],
        reason: [3, s('Brief CamelCase reason for any failure.')],
        lastPhaseTransitionTime: [4, time('When the volume last moved to another phase.')],
      }),
    ),
  ],
});

/** Upstream SetDefaults_PersistentVolume: phase Pending, reclaim policy Retain, volumeMode Filesystem. */
function defaults(o: KObject): void {
  canonicalizeQuantities(persistentVolumeSchema, o);
  const spec = ensureRec(o, 'spec');
  if (!spec.persistentVolumeReclaimPolicy) spec.persistentVolumeReclaimPolicy = 'Retain';
  if (!spec.volumeMode) spec.volumeMode = 'Filesystem';
  const status = ensureRec(o, 'status');
  if (!status.phase) status.phase = 'Pending';
}

/** Upstream ValidatePersistentVolumeSpec (the source-independent rules). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out = accessModeCauses(spec.accessModes, 'spec.accessModes');
  const capacity = rec(spec.capacity);
  if (!capacity || Object.keys(capacity).length === 0) out.push(required('spec.capacity'));
  else {
    if (!('storage' in capacity) || Object.keys(capacity).length > 1) out.push(notSupported('spec.capacity', capacity, ['storage']));
    out.push(...resourceList('spec.capacity', capacity, { positive: true }));
  }
  const sources = PV_SOURCES.filter((k) => spec[k] !== undefined && spec[k] !== null);
  if (sources.length === 0) out.push(required('spec', 'must specify a volume type'));
  sources.slice(1).forEach((k) => out.push(forbidden(child('spec', k), 'may not specify more than 1 volume type')));
  out.push(...oneOf('spec.persistentVolumeReclaimPolicy', spec.persistentVolumeReclaimPolicy, RECLAIM_POLICIES));
  out.push(...oneOf('spec.volumeMode', spec.volumeMode, VOLUME_MODES));
  return out;
}

/** Upstream ValidatePersistentVolumeUpdate: the volume source and volumeMode are fixed; nodeAffinity may only be set once. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  const spec = rec(o.spec) ?? {};
  const oldSpec = rec(old.spec) ?? {};
  const changed = PV_SOURCES.filter((k) => !semanticEqual(spec[k], oldSpec[k]));
  if (changed.length) out.push(forbidden('spec.persistentvolumesource', `spec.persistentvolumesource is immutable after creation\n  changed: ${changed.join(', ')}`));
  if ((spec.volumeMode ?? '') !== (oldSpec.volumeMode ?? '')) out.push(immutable('spec.volumeMode', spec.volumeMode ?? null));
  if (oldSpec.nodeAffinity && !semanticEqual(spec.nodeAffinity, oldSpec.nodeAffinity)) out.push(immutable('spec.nodeAffinity', spec.nodeAffinity ?? null));
  return out;
}

/** Upstream GetPersistentVolumeClass: the beta annotation wins over spec.storageClassName. */
function pvClass(o: KObject): string {
  return storageClassOf(o);
}

export function persistentVolumeColumns(now: Now): TableColumn[] {
  return [
    column('Capacity', 'string', 'capacity is the description of the persistent volume\'s resources and capacity.', (o) => str(get(o, 'spec', 'capacity', 'storage')) ?? '0'),
    column('Access Modes', 'string', 'accessModes contains all ways the volume can be mounted.', (o) => accessModesString(get(o, 'spec', 'accessModes'))),
    column('Reclaim Policy', 'string', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.', (o) => strAt(o, 'spec', 'persistentVolumeReclaimPolicy')),
    column('Status', 'string', 'phase indicates if a volume is available, bound to a claim, or released by a claim.', (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : strAt(o, 'status', 'phase'))),
    column('Claim', 'string', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.', (o) => {
      const ref = rec(get(o, 'spec', 'claimRef'));
      return ref ? `${strAt(ref, 'namespace')}/${strAt(ref, 'name')}` : '';
    }),
    column('StorageClass', 'string', 'storageClassName is the name of StorageClass to which this persistent volume belongs.', pvClass),
    column('VolumeAttributesClass', 'string', 'Name of VolumeAttributesClass to which this persistent volume belongs.', (o) => str(get(o, 'spec', 'volumeAttributesClassName')) ?? '<unset>'),
    column('Reason', 'string', 'reason is a brief CamelCase string that describes any failure.', (o) => strAt(o, 'status', 'reason')),
    ageColumn(now),
    column('VolumeMode', 'string', 'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.', (o) => str(get(o, 'spec', 'volumeMode')) ?? '<unset>', 1),
  ];
}

export function makePersistentVolumeType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'persistentvolumes',
    singular: 'persistentvolume',
    kind: 'PersistentVolume',
    listKind: 'PersistentVolumeList',
    namespaced: false,
    shortNames: ['pv'],
    schema: persistentVolumeSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: persistentVolumeColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const persistentVolumeType: ResourceType = makePersistentVolumeType();
