import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { canonicalizeQuantities } from '../canonical-quantities';
import { withMeta } from '../common-schemas';
import { messages, oneOf, resourceList, validateLabelSelector } from '../common-validation';
import { forbidden, key, required } from '../field-errors';
import { dns1123SubdomainErrors } from '../../api/name-validation';
import { ensureRec, get, rec, str, strAt } from '../obj-access';
import { compareQuantities, parseQuantity } from '../quantity';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, mapList, obj, ptr, quantityMap, str as s, strEnum, strMap, time } from '../schema-builders';
import { diffPaths } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { accessModeCauses, accessModesString, STORAGE_CLASS_ANNOTATION, VOLUME_MODES } from './pv-common';
import { persistentVolumeClaimSpecSchema } from './pvc-spec-schema';

/** core/v1 PersistentVolumeClaim. */

const V1 = 'k8s.io.api.core.v1';

const claimConditionSchema = obj(
  `${V1}.PersistentVolumeClaimCondition`,
  {
    type: [1, ptr(s())],
    status: [2, ptr(s())],
    lastProbeTime: [3, time()],
    lastTransitionTime: [4, time()],
    reason: [5, s()],
    message: [6, s()],
  },
  { required: ['type'] },
);

const volumeHealthConditionSchema = obj(`${V1}.VolumeHealthCondition`, { status: [1, ptr(s())], reason: [2, ptr(s())], message: [3, s()] }, { required: ['status', 'reason'] });

export const persistentVolumeClaimSchema = withMeta(`${V1}.PersistentVolumeClaim`, {
  spec: [2, persistentVolumeClaimSpecSchema],
  status: [
    3,
    obj(`${V1}.PersistentVolumeClaimStatus`, {
      phase: [1, strEnum(['Pending', 'Bound', 'Lost'])],
      accessModes: [2, atomicList(s())],
      capacity: [3, quantityMap()],
      conditions: [4, mapList(claimConditionSchema, ['type'])],
      allocatedResources: [5, quantityMap()],
      allocatedResourceStatuses: [7, strMap()],
      currentVolumeAttributesClassName: [8, ptr(s())],
      modifyVolumeStatus: [9, obj(`${V1}.ModifyVolumeStatus`, { targetVolumeAttributesClassName: [1, s()], status: [2, ptr(s())] })],
      healthStatus: [
        10,
        obj(`${V1}.VolumeHealthStatus`, {
          healthConditions: [1, mapList(volumeHealthConditionSchema, ['status', 'reason'])],
          lastTransitionTime: [2, time()],
        }),
      ],
    }),
  ],
});

/** Upstream SetDefaults_PersistentVolumeClaim(Spec): phase Pending, volumeMode Filesystem. */
function defaults(o: KObject): void {
  canonicalizeQuantities(persistentVolumeClaimSchema, o);
  const spec = ensureRec(o, 'spec');
  if (!spec.volumeMode) spec.volumeMode = 'Filesystem';
  const status = ensureRec(o, 'status');
  if (!status.phase) status.phase = 'Pending';
}

/** Upstream ValidatePersistentVolumeClaimSpec (the commonly hit rules). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out = accessModeCauses(spec.accessModes, 'spec.accessModes', 'at least 1 access mode is required');
  out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const requests = rec(get(spec, 'resources', 'requests'));
  if (!requests || requests.storage === undefined || requests.storage === null) out.push(required(key('spec.resources', 'storage')));
  out.push(...resourceList('spec.resources.requests', requests, { positive: true }));
  out.push(...resourceList('spec.resources.limits', get(spec, 'resources', 'limits')));
  const sc = str(spec.storageClassName);
  if (sc) out.push(...messages('spec.storageClassName', sc, dns1123SubdomainErrors(sc)));
  out.push(...oneOf('spec.volumeMode', spec.volumeMode, VOLUME_MODES));
  return out;
}

/**
 * Upstream ValidatePersistentVolumeClaimUpdate: the spec is immutable except that volumeName may
 * be set once (binding), volumeAttributesClassName may change, and a bound claim's storage request
 * may grow.
 */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const spec = structuredClone(rec(o.spec) ?? {});
  const oldSpec = structuredClone(rec(old.spec) ?? {});
  const out: Cause[] = [];
  if (!strAt(oldSpec, 'volumeName')) oldSpec.volumeName = spec.volumeName;
  oldSpec.volumeAttributesClassName = spec.volumeAttributesClassName;
  const newSize = get(spec, 'resources', 'requests', 'storage');
  const oldSize = get(oldSpec, 'resources', 'requests', 'storage');
  if (strAt(o, 'status', 'phase') === 'Bound') {
    const nq = typeof newSize === 'string' ? parseQuantity(newSize) : undefined;
    const oq = typeof oldSize === 'string' ? parseQuantity(oldSize) : undefined;
    if (nq && oq && compareQuantities(nq, oq) < 0) out.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
    const req = rec(get(oldSpec, 'resources', 'requests'));
    if (req) req.storage = newSize;
  }
  const changed = diffPaths(oldSpec, spec);
  if (changed.length) {
    out.push(
      forbidden('spec', `spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  changed: ${changed.map((p) => `spec.${p}`).join(', ')}`),
    );
  }
  return out;
}

function pvcClass(o: KObject): string {
  return o.metadata?.annotations?.[STORAGE_CLASS_ANNOTATION] ?? strAt(o, 'spec', 'storageClassName');
}

export function persistentVolumeClaimColumns(now: Now): TableColumn[] {
  const bound = (o: KObject) => strAt(o, 'spec', 'volumeName') !== '';
  return [
    column('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.', (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : strAt(o, 'status', 'phase'))),
    column('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.', (o) => strAt(o, 'spec', 'volumeName')),
    column('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.', (o) => (bound(o) ? (str(get(o, 'status', 'capacity', 'storage')) ?? '0') : '')),
    column('Access Modes', 'string', 'accessModes contains the actual access modes the volume backing the PVC has.', (o) => (bound(o) ? accessModesString(get(o, 'status', 'accessModes')) : '')),
    column('StorageClass', 'string', 'storageClassName is the name of the StorageClass required by the claim.', pvcClass),
    column('VolumeAttributesClass', 'string', 'volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.', (o) => str(get(o, 'spec', 'volumeAttributesClassName')) ?? '<unset>'),
    ageColumn(now),
    column('VolumeMode', 'string', 'volumeMode defines what type of volume is required by the claim.', (o) => str(get(o, 'spec', 'volumeMode')) ?? '<unset>', 1),
  ];
}

export function makePersistentVolumeClaimType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    listKind: 'PersistentVolumeClaimList',
    namespaced: true,
    shortNames: ['pvc'],
    schema: persistentVolumeClaimSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: persistentVolumeClaimColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const persistentVolumeClaimType: ResourceType = makePersistentVolumeClaimType();
