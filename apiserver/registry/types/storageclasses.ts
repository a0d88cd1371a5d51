import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { qualifiedNameErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { forbidden, immutable, index, invalid, notSupported, required, tooLong } from '../field-errors';
import { arr, rec, recs, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bool, ptr, str as s, strEnum, strMap } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import {
  BINDING_IMMEDIATE,
  isDefaultClass,
  RECLAIM_DELETE,
  STORAGE_CLASS_RECLAIM_POLICIES,
  STORAGE_V1,
  topologySelectorTermSchema,
  VOLUME_BINDING_MODES,
} from './storage-common';

/** storage.svc.io/v1 StorageClass: a class of storage PersistentVolumes are provisioned for. */

/** Upstream maxProvisionerParameterLen and maxProvisionerParameterSize. */
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;

export const storageClassSchema = withMeta(`${STORAGE_V1}.StorageClass`, {
  provisioner: [2, s('The type of the provisioner; immutable.')],
  parameters: [3, strMap('Parameters for the provisioner that creates volumes of this class; immutable.')],
  reclaimPolicy: [4, ptr(strEnum(STORAGE_CLASS_RECLAIM_POLICIES, 'The reclaim policy of volumes provisioned for this class: Delete (the default) or Retain.'))],
  mountOptions: [5, atomicList(s(), 'Mount options of volumes provisioned for this class, such as ro or soft; not validated.')],
  allowVolumeExpansion: [6, ptr(bool('Whether claims of this class may grow.'))],
  volumeBindingMode: [7, ptr(strEnum(VOLUME_BINDING_MODES, 'When claims are bound: Immediate (the default) or WaitForFirstConsumer, once a pod using the claim is scheduled.'))],
  allowedTopologies: [8, atomicList(topologySelectorTermSchema, 'The node topologies volumes of this class may be provisioned in; empty for any.')],
});

/** Upstream SetDefaults_StorageClass: reclaimPolicy Delete, volumeBindingMode Immediate. */
function defaults(o: KObject): void {
  if (!o.reclaimPolicy) o.reclaimPolicy = RECLAIM_DELETE;
  if (!o.volumeBindingMode) o.volumeBindingMode = BINDING_IMMEDIATE;
}

/** Upstream validateParameters: at most 512 entries of 256 KiB in all, no empty key. */
function parameterCauses(params: unknown): Cause[] {
  const p = rec(params) ?? {};
  const entries = Object.entries(p);
  if (entries.length > MAX_PARAMETERS) return [tooLong('parameters', MAX_PARAMETERS)];
  const out: Cause[] = [];
  let size = 0;
  for (const [k, v] of entries) {
    if (k.length < 1) out.push(invalid('parameters', k, 'field can not be empty.'));
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size > MAX_PARAMETERS_SIZE) out.push(tooLong('parameters', MAX_PARAMETERS_SIZE));
  return out;
}

/** Upstream ValidateAllowedTopologies: each term has requirements with a key and at least one value; keys are not repeated within a term. */
function topologyCauses(terms: unknown): Cause[] {
  const out: Cause[] = [];
  recs(terms).forEach((term, i) => {
    const path = `${index('allowedTopologies', i)}.matchLabelExpressions`;
    const exprs = recs(term.matchLabelExpressions);
    if (exprs.length === 0) out.push(required(path, 'must contain at least one requirement'));
    const seen = new Set<string>();
    exprs.forEach((e, j) => {
      const p = index(path, j);
      const key = str(e.key) ?? '';
      out.push(...messages(`${p}.key`, key, qualifiedNameErrors(key)));
      if (seen.has(key)) out.push(invalid(`${p}.key`, key, 'duplicate label key'));
      seen.add(key);
      if (arr(e.values).length === 0) out.push(required(`${p}.values`, 'must specify as least one value'));
    });
  });
  return out;
}

/** Upstream ValidateStorageClass. */
export function validateStorageClass(o: KObject): Cause[] {
  const out: Cause[] = [];
  const provisioner = str(o.provisioner) ?? '';
  if (provisioner === '') out.push(required('provisioner'));
  else out.push(...messages('provisioner', provisioner, qualifiedNameErrors(provisioner.toLowerCase())));
  out.push(...parameterCauses(o.parameters));
  const policy = str(o.reclaimPolicy);
  if (policy !== undefined && !STORAGE_CLASS_RECLAIM_POLICIES.includes(policy)) out.push(notSupported('reclaimPolicy', policy, STORAGE_CLASS_RECLAIM_POLICIES));
  const mode = str(o.volumeBindingMode);
  if (mode === undefined) out.push(required('volumeBindingMode'));
  else if (!VOLUME_BINDING_MODES.includes(mode)) out.push(notSupported('volumeBindingMode', mode, VOLUME_BINDING_MODES));
  out.push(...topologyCauses(o.allowedTopologies));
  return out;
}

/** Upstream ValidateStorageClassUpdate: provisioner, parameters, reclaimPolicy and volumeBindingMode are fixed. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  if (!semanticEqual(rec(o.parameters) ?? {}, rec(old.parameters) ?? {})) out.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (o.provisioner !== old.provisioner) out.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (o.reclaimPolicy !== old.reclaimPolicy) out.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (o.volumeBindingMode !== old.volumeBindingMode) out.push(immutable('volumeBindingMode', o.volumeBindingMode ?? null));
  return out;
}

export function storageClassColumns(now: Now): TableColumn[] {
  return [
    column('Provisioner', 'string', 'provisioner indicates the type of the provisioner.', (o) => str(o.provisioner) ?? ''),
    column('ReclaimPolicy', 'string', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.', (o) => str(o.reclaimPolicy) ?? RECLAIM_DELETE),
    column('VolumeBindingMode', 'string', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.', (o) => str(o.volumeBindingMode) ?? BINDING_IMMEDIATE),
    column('AllowVolumeExpansion', 'string', 'allowVolumeExpansion shows whether the storage class allow volume expand.', (o) => String(o.allowVolumeExpansion === true)),
    ageColumn(now),
  ];
}

export function makeStorageClassType(now: Now = Date.now): ResourceType {
  return {
    group: 'storage.svc.io',
    version: 'v1',
    resource: 'storageclasses',
    singular: 'storageclass',
    kind: 'StorageClass',
    listKind: 'StorageClassList',
    namespaced: false,
    shortNames: ['sc'],
    schema: storageClassSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: storageClassColumns(now),
    // Upstream printStorageClass: kubectl get storageclass marks the default class.
    tableName: (o) => `${o.metadata.name ?? ''}${isDefaultClass(o) ? ' (default)' : ''}`,
    defaults,
    validate: validateStorageClass,
    validateUpdate,
  };
}
