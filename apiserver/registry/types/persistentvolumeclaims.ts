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
import { atomicList, described, mapList, obj, ptr, quantityMap, str as s, strEnum, strMap, time } from '../schema-builders';
import { diffPaths } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { accessModeCauses, accessModesString, storageClassAnnotation, storageClassOf, VOLUME_MODES } from './pv-common';
import { persistentVolumeClaimSpecSchema } from './pvc-spec-schema';

/** core/v1 PersistentVolumeClaim. */

const V1 = 'k8s.io.api.core.v1';

const claimConditionSchema = obj(
  `${V1}.PersistentVolumeClaimCondition`,
  {
    type: [1, ptr(s('Type of the condition, such as Resizing or FileSystemResizePending.'))],
    status: [2, ptr(s('True, False or Unknown.'))],
    lastProbeTime: [3, time('When the condition was last probed.')],
    lastTransitionTime: [4, time('When the condition last changed status.')],
    reason: [5, s('Unique, brief CamelCase reason for the last transition.')],
    message: [6, s('Human-readable details of the last transition.')],
  },
  { required: ['type'] },
);

const volumeHealthConditionSchema = obj(`${V1}.VolumeHealthCondition`, {
    status: [1, ptr(s('True, False or Unknown.'))],
    reason: [2, ptr(s('Brief CamelCase reason for the condition.'))],
    message: [3, s('Human-readable details of the condition.')],
  }, { required: ['status', 'reason'] });

export const persistentVolumeClaimSchema = withMeta(`${V1}.PersistentVolumeClaim`, {
  spec: [2, described('What the user asks for: the storage and properties of the volume.', persistentVolumeClaimSpecSchema)],
  status: [
    3,
    described(
      'The current state of the claim; read-only.',
      obj(`${V1}.PersistentVolumeClaimStatus`, {
        phase: [1, strEnum(['Pending', 'Bound', 'Lost'], 'The current phase of the claim.')],
        accessModes: [2, atomicList(s(), 'The access modes the volume backing the claim actually has.')],
        capacity: [3, quantityMap('The actual resources of the underlying volume.')],
        conditions: [4, mapList(claimConditionSchema, ['type'], 'The current conditions of the claim; Resizing while the volume is being resized.')],
        allocatedResources: [5, quantityMap('The resources allocated to the claim, which may exceed the request during a resize.')],
        allocatedResourceStatuses: [7, strMap('The status of each resource being resized, such as ControllerResizeInProgress.')],
        currentVolumeAttributesClassName: [8, ptr(s('The VolumeAttributesClass the volume currently uses.'))],
        modifyVolumeStatus: [
          9,
          described(
            'State of an in-progress change of VolumeAttributesClass; unset when none.',
            obj(`${V1}.ModifyVolumeStatus`, {
              targetVolumeAttributesClassName: [1, s('The VolumeAttributesClass being applied.')],
              status: [2, ptr(s('Pending, InProgress or Infeasible.'))],
            }),
          ),
        ],
        healthStatus: [
          10,
          described(
            'The health of the volume as reported by its driver.',
            obj(`${V1}.VolumeHealthStatus`, {
              healthConditions: [1, mapList(volumeHealthConditionSchema, ['status', 'reason'], 'The current health conditions of the volume.')],
              lastTransitionTime: [2, time('When the health status last changed.')],
            }),
          ),
        ],
      }),
    ),
  ],
});

/** Upstream SetDefaults_PersistentVolumeClaim(Spec): phase Pending, volumeMode Filesystem (claims and StatefulSet claim templates alike). */
export function defaultPersistentVolumeClaim(o: KObject): void {
  canonicalizeQuantities(persistentVolumeClaimSchema, o);
  const spec = ensureRec(o, 'spec');
  if (!spec.volumeMode) spec.volumeMode = 'Filesystem';
  const status = ensureRec(o, 'status');
  if (!status.phase) status.phase = 'Pending';
}

/** Upstream ValidatePersistentVolumeClaimSpec (the commonly hit rules); paths start at spec. */
export function validatePersistentVolumeClaimSpec(o: KObject): Cause[] {
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
  // Upstream's retroactive default class: a claim that named no class (neither field nor beta
  // annotation) and is not bound may be given one, once.
  const unnamed = (oldSpec.storageClassName === undefined || oldSpec.storageClassName === null) && storageClassAnnotation(old) === undefined;
  if (unnamed && !strAt(oldSpec, 'volumeName') && typeof spec.storageClassName === 'string' && spec.storageClassName !== '') oldSpec.storageClassName = spec.storageClassName;
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
  return storageClassOf(o);
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
    defaults: defaultPersistentVolumeClaim,
    validate: validatePersistentVolumeClaimSpec,
    validateUpdate,
  };
}

export const persistentVolumeClaimType: ResourceType = makePersistentVolumeClaimType();
