import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { labelSelectorRequirements } from '../../api/label-selector';
import { nonNegative, validateLabelSelector } from '../common-validation';
import { forbidden, index, invalid, required } from '../field-errors';
import { ensureRec, num, rec, recs, setDefault, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { decodedEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { defaultPersistentVolumeClaim, validatePersistentVolumeClaimSpec } from './persistentvolumeclaims';
import { defaultPodTemplate, validatePodTemplate } from './pod-template';
import { POD_MANAGEMENT_POLICIES, statefulSetSchema } from './statefulset-schema';
import { containerColumns, intOrPercentCauses, intOrPercentValue } from './workload-common';

/**
 * apps/v1 StatefulSet: upstream's defaults (SetDefaults_StatefulSet), validation
 * (ValidateStatefulSetSpec / ValidateStatefulSetUpdate / ValidateStatefulSetStatus, with
 * upstream's messages), the fields an update may change, and kubectl's table columns.
 */

/** Upstream SetDefaults_StatefulSet, plus the template's and the claim templates' own defaults. */
function defaults(o: KObject): void {
  const spec = ensureRec(o, 'spec');
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = ensureRec(spec, 'updateStrategy');
  if (!strategy.type) {
    strategy.type = 'RollingUpdate';
    // As upstream: rollingUpdate (partition 0) is filled in only when the type itself was defaulted.
    ensureRec(strategy, 'rollingUpdate');
  }
  const rolling = rec(strategy.rollingUpdate);
  if (strategy.type === 'RollingUpdate' && rolling) setDefault(rolling, 'partition', 0, false);
  const retention = ensureRec(spec, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  setDefault(spec, 'replicas', 1, false);
  setDefault(spec, 'revisionHistoryLimit', 10, false);
  defaultPodTemplate(spec.template);
  for (const claim of recs(spec.volumeClaimTemplates)) defaultPersistentVolumeClaim(claim as KObject);
}

/**
 * The template with the volumes its pods get from the claim templates (a claim template replaces
 * a template volume of its name), so that volumeMounts naming a claim template validate.
 */
function templateWithClaimVolumes(spec: Record<string, unknown>): unknown {
  const template = structuredClone(rec(spec.template));
  const podSpec = rec(template?.spec);
  const claims = recs(spec.volumeClaimTemplates).map((c) => str(rec(c.metadata)?.name) ?? '').filter((n) => n !== '');
  if (!podSpec || claims.length === 0) return template;
  const kept = recs(podSpec.volumes).filter((v) => !claims.includes(str(v.name) ?? ''));
  podSpec.volumes = [...claims.map((name) => ({ name, persistentVolumeClaim: { claimName: name } })), ...kept];
  return template;
}

function validateStrategy(spec: Record<string, unknown>): Cause[] {
  const strategy = rec(spec.updateStrategy) ?? {};
  const rolling = strategy.rollingUpdate;
  const path = 'spec.updateStrategy';
  switch (strategy.type) {
    case undefined:
    case null:
    case '':
      return [required(path)];
    case 'OnDelete':
      return rolling !== undefined && rolling !== null ? [invalid(`${path}.rollingUpdate`, rolling, "only allowed for updateStrategy 'RollingUpdate'")] : [];
    case 'RollingUpdate': {
      const r = rec(rolling);
      if (!r) return [];
      const out = nonNegative(`${path}.rollingUpdate.partition`, r.partition);
      if (r.maxUnavailable !== undefined && r.maxUnavailable !== null) {
        out.push(...intOrPercentCauses(`${path}.rollingUpdate.maxUnavailable`, r.maxUnavailable));
        if (intOrPercentValue(r.maxUnavailable) === 0) out.push(invalid(`${path}.rollingUpdate.maxUnavailable`, r.maxUnavailable, 'cannot be 0'));
      }
      return out;
    }
    default:
      return [invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")];
  }
}

/** Claim templates must make valid claims (upstream leaves that to the claim's creation; a StatefulSet whose claims can never be made is refused here). */
function validateClaimTemplates(spec: Record<string, unknown>): Cause[] {
  const out: Cause[] = [];
  recs(spec.volumeClaimTemplates).forEach((claim, i) => {
    const path = index('spec.volumeClaimTemplates', i);
    if (!str(rec(claim.metadata)?.name)) out.push(required(`${path}.metadata.name`));
    for (const c of validatePersistentVolumeClaimSpec(claim as KObject)) out.push({ ...c, field: c.field ? `${path}.${c.field}` : path });
  });
  return out;
}

/** Upstream ValidateStatefulSetSpec. */
function validateSpec(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const policy = spec.podManagementPolicy;
  if (policy === undefined || policy === null || policy === '') out.push(required('spec.podManagementPolicy'));
  else if (typeof policy !== 'string' || !POD_MANAGEMENT_POLICIES.includes(policy)) out.push(invalid('spec.podManagementPolicy', policy, "must be 'OrderedReady' or 'Parallel'"));
  out.push(...validateStrategy(spec));
  out.push(...nonNegative('spec.replicas', spec.replicas));
  out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
  out.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
  out.push(...nonNegative('spec.ordinals.start', rec(spec.ordinals)?.start));
  const selector = spec.selector;
  if (selector === undefined || selector === null) out.push(required('spec.selector'));
  else {
    out.push(...validateLabelSelector(selector, 'spec.selector'));
    if (labelSelectorRequirements(selector)?.length === 0) out.push(invalid('spec.selector', selector, 'empty selector is invalid for statefulset'));
  }
  out.push(...validatePodTemplate(templateWithClaimVolumes(spec), 'spec.template', { selector, restartPolicies: ['Always'], kind: 'StatefulSet' }));
  out.push(...validateClaimTemplates(spec));
  return out;
}

/** Upstream ValidateStatefulSetStatus (a status write). */
function validateStatus(o: KObject, old?: KObject): Cause[] {
  const status = rec(o.status) ?? {};
  const out: Cause[] = [];
  for (const f of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']) out.push(...nonNegative(`status.${f}`, status[f]));
  const replicas = num(status.replicas) ?? 0;
  for (const f of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    const v = num(status[f]) ?? 0;
    if (v > replicas) out.push(invalid(`status.${f}`, v, 'cannot be greater than status.replicas'));
  }
  if ((num(status.availableReplicas) ?? 0) > (num(status.readyReplicas) ?? 0)) out.push(invalid('status.availableReplicas', status.availableReplicas, 'cannot be greater than status.readyReplicas'));
  const before = num(rec(old?.status)?.collisionCount);
  const now = num(status.collisionCount);
  if (before !== undefined && (now === undefined || now < before)) out.push(invalid('status.collisionCount', now ?? 0, 'cannot be decremented'));
  return out;
}

function validate(o: KObject, old?: KObject, subresource = ''): Cause[] {
  return subresource === 'status' ? validateStatus(o, old) : validateSpec(o);
}

/** The spec fields an update may change (upstream ValidateStatefulSetUpdate); the selector and everything else are fixed at creation. */
const MUTABLE_SPEC_FIELDS = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

function validateUpdate(o: KObject, old: KObject): Cause[] {
  const spec = { ...(rec(o.spec) ?? {}) };
  const oldSpec = { ...(rec(old.spec) ?? {}) };
  for (const f of MUTABLE_SPEC_FIELDS) {
    delete spec[f];
    delete oldSpec[f];
  }
  if (decodedEqual(spec, oldSpec)) return [];
  return [
    forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

export function statefulSetColumns(now: Now): TableColumn[] {
  return [
    column('Ready', 'string', 'Number of the pod with ready state', (o) => `${num(rec(o.status)?.readyReplicas) ?? 0}/${num(rec(o.spec)?.replicas) ?? 0}`),
    ageColumn(now),
    ...containerColumns(),
  ];
}

export function makeStatefulSetType(now: Now = Date.now): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    listKind: 'StatefulSetList',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    schema: statefulSetSchema,
    hasStatus: true,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
    specFields: ['spec'],
    tableColumns: statefulSetColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const statefulSetType: ResourceType = makeStatefulSetType();
