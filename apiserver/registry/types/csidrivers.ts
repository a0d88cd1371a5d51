import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { forbidden, immutable, index, invalid, notSupported, required } from '../field-errors';
import { ensureRec, rec, recs, str, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bool, described, int64, obj, ptr, setList, str as s, strEnum } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { STORAGE_V1 } from './storage-common';

/** storage.svc.io/v1 CSIDriver: how a CSI volume driver deployed in the cluster wants to be called. */

const FS_GROUP_POLICIES: readonly string[] = ['ReadWriteOnceWithFSType', 'File', 'None'];
const LIFECYCLE_MODES: readonly string[] = ['Persistent', 'Ephemeral'];

const tokenRequestSchema = obj(`${STORAGE_V1}.TokenRequest`, {
  audience: [1, s('The intended audience of the token.')],
  expirationSeconds: [2, ptr(int64('How long the token stays valid.'))],
});

export const csiDriverSchema = withMeta(`${STORAGE_V1}.CSIDriver`, {
  spec: [
    2,
    described(
      'The specification of the CSI driver.',
      obj(`${STORAGE_V1}.CSIDriverSpec`, {
        attachRequired: [1, ptr(bool('Whether the driver needs an attach (ControllerPublishVolume) before mounting; immutable.'))],
        podInfoOnMount: [2, ptr(bool('Whether the pod\'s name, namespace and uid are passed on mount.'))],
        volumeLifecycleModes: [3, setList(strEnum(LIFECYCLE_MODES), 'The kinds of volumes the driver supports: Persistent (the default) and Ephemeral; immutable.')],
        storageCapacity: [4, ptr(bool('Whether scheduling considers the capacity the driver reports.'))],
        fsGroupPolicy: [5, ptr(strEnum(FS_GROUP_POLICIES, 'Whether the volume\'s ownership may be changed to the pod\'s fsGroup.'))],
        tokenRequests: [6, atomicList(tokenRequestSchema, 'Service account tokens the driver needs on mount.')],
        requiresRepublish: [7, ptr(bool('Whether NodePublishVolume is called periodically.'))],
        seLinuxMount: [8, ptr(bool('Whether the driver supports the "-o context" mount option.'))],
        nodeAllocatableUpdatePeriodSeconds: [9, ptr(int64('How often the CSINode allocatable count is refreshed; at least 10.'))],
        serviceAccountTokenInSecrets: [10, ptr(bool('Whether tokens are passed in the Secrets field rather than the volume context.'))],
      }),
    ),
  ],
});

/** Upstream SetDefaults_CSIDriver. */
function defaults(o: KObject): void {
  const spec = ensureRec(o, 'spec');
  spec.attachRequired ??= true;
  spec.podInfoOnMount ??= false;
  spec.storageCapacity ??= false;
  spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
  spec.requiresRepublish ??= false;
  spec.seLinuxMount ??= false;
  if (strs(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
}

/** Upstream ValidateCSIDriver (spec). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  if (typeof spec.attachRequired !== 'boolean') out.push(required('spec.attachRequired'));
  const policy = str(spec.fsGroupPolicy);
  if (policy !== undefined && !FS_GROUP_POLICIES.includes(policy)) out.push(notSupported('spec.fsGroupPolicy', policy, FS_GROUP_POLICIES));
  strs(spec.volumeLifecycleModes).forEach((m, i) => {
    if (!LIFECYCLE_MODES.includes(m)) out.push(notSupported(index('spec.volumeLifecycleModes', i), m, LIFECYCLE_MODES));
  });
  const audiences = new Set<string>();
  recs(spec.tokenRequests).forEach((t, i) => {
    const a = str(t.audience) ?? '';
    if (audiences.has(a)) out.push(invalid(`${index('spec.tokenRequests', i)}.audience`, a, 'may not specify the same audience more than once'));
    audiences.add(a);
    if (typeof t.expirationSeconds === 'number' && t.expirationSeconds < 600) {
      out.push(invalid(`${index('spec.tokenRequests', i)}.expirationSeconds`, t.expirationSeconds, 'may not specify a duration less than 10 minutes'));
    }
  });
  if (typeof spec.nodeAllocatableUpdatePeriodSeconds === 'number' && spec.nodeAllocatableUpdatePeriodSeconds < 10) {
    out.push(invalid('spec.nodeAllocatableUpdatePeriodSeconds', spec.nodeAllocatableUpdatePeriodSeconds, 'must be greater than or equal to 10 seconds'));
  }
  if (spec.serviceAccountTokenInSecrets === true && recs(spec.tokenRequests).length === 0) {
    out.push(forbidden('spec.serviceAccountTokenInSecrets', 'may only be set when tokenRequests is specified'));
  }
  return out;
}

/** Upstream ValidateCSIDriverUpdate: attachRequired and volumeLifecycleModes are fixed. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const oldSpec = rec(old.spec) ?? {};
  const out: Cause[] = [];
  if (spec.attachRequired !== oldSpec.attachRequired) out.push(immutable('spec.attachRequired', spec.attachRequired ?? null));
  if (!semanticEqual(spec.volumeLifecycleModes, oldSpec.volumeLifecycleModes)) out.push(immutable('spec.volumeLifecycleModes', spec.volumeLifecycleModes ?? null));
  return out;
}

function csiDriverColumns(now: Now): TableColumn[] {
  const flag = (f: string) => (o: KObject) => String(rec(o.spec)?.[f] === true);
  return [
    column('AttachRequired', 'boolean', 'attachRequired indicates this CSI volume driver requires an attach operation.', (o) => rec(o.spec)?.attachRequired === true),
    column('PodInfoOnMount', 'boolean', 'podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations.', (o) => rec(o.spec)?.podInfoOnMount === true),
    column('StorageCapacity', 'boolean', 'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity.', (o) => rec(o.spec)?.storageCapacity === true),
    column('TokenRequests', 'string', 'tokenRequests indicates the CSI driver needs pods\' service account tokens.', (o) => recs(rec(o.spec)?.tokenRequests).map((t) => str(t.audience) ?? '').join(',') || '<unset>'),
    column('RequiresRepublish', 'string', 'requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called.', flag('requiresRepublish')),
    column('Modes', 'string', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.', (o) => strs(rec(o.spec)?.volumeLifecycleModes).join(',') || '<none>'),
    ageColumn(now),
  ];
}

export function makeCsiDriverType(now: Now = Date.now): ResourceType {
  return {
    group: 'storage.svc.io',
    version: 'v1',
    resource: 'csidrivers',
    singular: 'csidriver',
    kind: 'CSIDriver',
    listKind: 'CSIDriverList',
    namespaced: false,
    schema: csiDriverSchema,
    hasStatus: false,
    tableColumns: csiDriverColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}
