import { isDeepStrictEqual } from 'node:util';
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from '../../api/batch-names';
import type { Cause } from '../../api/errors';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import { dns1123LabelErrors, dns1123SubdomainErrors, regexError } from '../../api/name-validation';
import type { KObject } from '../../api/types';
import { nonNegative, validateLabelSelector } from '../common-validation';
import { child, immutable, invalid, notSupported, required, tooLong } from '../field-errors';
import { num, rec } from '../obj-access';
import { COMPLETION_MODES, POD_REPLACEMENT_POLICIES } from './job-schema';
import { validatePodFailurePolicy, validateSuccessPolicy } from './job-policy-validation';
import { validatePodTemplate } from './pod-template';

/** Upstream's batch/v1 Job validation (pkg/apis/batch/validation), with its messages. */

const MAX_PARALLELISM_INDEXED = 100_000;
const MAX_FAILED_INDEXES_LIMIT = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const MAX_MANAGED_BY_LENGTH = 63;
const JOB_RESTART_POLICIES: readonly string[] = ['OnFailure', 'Never'];

const isSet = (v: unknown) => v !== undefined && v !== null;

function indexedRules(spec: Record<string, unknown>, path: string): Cause[] {
  const out: Cause[] = [];
  const completions = num(spec.completions);
  const parallelism = num(spec.parallelism);
  const maxFailed = num(spec.maxFailedIndexes);
  if (completions === undefined) out.push(required(child(path, 'completions'), 'when completion mode is Indexed'));
  if (parallelism !== undefined && parallelism > MAX_PARALLELISM_INDEXED) out.push(invalid(child(path, 'parallelism'), parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`));
  if (completions !== undefined && maxFailed !== undefined && maxFailed > completions) out.push(invalid(child(path, 'maxFailedIndexes'), maxFailed, 'must be less than or equal to completions'));
  if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_LIMIT) out.push(invalid(child(path, 'maxFailedIndexes'), maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES_LIMIT}`));
  if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && isSet(spec.backoffLimitPerIndex) && maxFailed === undefined) {
    out.push(required(child(path, 'maxFailedIndexes'), `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
  }
  return out;
}

function restartPolicyRules(spec: Record<string, unknown>, path: string): Cause[] {
  const policy = rec(rec(spec.template)?.spec)?.restartPolicy;
  const p = child(path, 'template.spec.restartPolicy');
  // An unset policy defaults to Always, hence "Required" for both.
  if (policy === 'Always' || policy === undefined || policy === '') return [required(p, 'valid values: "OnFailure", "Never"')];
  if (typeof policy !== 'string' || !JOB_RESTART_POLICIES.includes(policy)) return [notSupported(p, policy, JOB_RESTART_POLICIES)];
  if (isSet(spec.podFailurePolicy) && policy !== 'Never') return [invalid(p, policy, 'only "Never" is supported when podFailurePolicy is specified')];
  return [];
}

const HTTP_PATH_FMT = "[-A-Za-z0-9/._~!$&'()*+,;=:@%]+";

/** Upstream IsDomainPrefixedPath and the 63-character limit of spec.managedBy. */
function managedByRules(v: string, path: string): Cause[] {
  const out: Cause[] = [];
  const slash = v.indexOf('/');
  if (v.length === 0) out.push(required(path));
  else if (slash <= 0 || slash === v.length - 1) out.push(invalid(path, v, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  else {
    const host = v.slice(0, slash);
    for (const m of dns1123SubdomainErrors(host)) out.push(invalid(path, host, m));
    const rest = v.slice(slash + 1);
    if (!new RegExp(`^${HTTP_PATH_FMT}$`).test(rest)) out.push(invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  }
  if (v.length > MAX_MANAGED_BY_LENGTH) out.push(tooLong(path, MAX_MANAGED_BY_LENGTH));
  return out;
}

/** Upstream validateJobSpec: everything but the selector (which a CronJob's template must leave unset). */
export function validateJobSpecBody(spec: Record<string, unknown>, path: string, selector?: unknown): Cause[] {
  const out: Cause[] = [];
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes']) out.push(...nonNegative(child(path, f), spec[f]));
  if (isSet(spec.maxFailedIndexes) && !isSet(spec.backoffLimitPerIndex)) out.push(required(child(path, 'backoffLimitPerIndex'), 'when maxFailedIndexes is specified'));
  if (typeof spec.managedBy === 'string') out.push(...managedByRules(spec.managedBy, child(path, 'managedBy')));
  const mode = spec.completionMode;
  if (isSet(mode) && (typeof mode !== 'string' || !COMPLETION_MODES.includes(mode))) out.push(notSupported(child(path, 'completionMode'), mode, COMPLETION_MODES));
  if (mode === 'Indexed') out.push(...indexedRules(spec, path));
  else {
    if (isSet(spec.backoffLimitPerIndex)) out.push(invalid(child(path, 'backoffLimitPerIndex'), spec.backoffLimitPerIndex, 'requires indexed completion mode'));
    if (isSet(spec.maxFailedIndexes)) out.push(invalid(child(path, 'maxFailedIndexes'), spec.maxFailedIndexes, 'requires indexed completion mode'));
  }
  if (isSet(spec.podFailurePolicy)) out.push(...validatePodFailurePolicy(spec, child(path, 'podFailurePolicy')));
  if (isSet(spec.successPolicy)) out.push(...validateSuccessPolicy(spec, child(path, 'successPolicy')));
  const replacement = spec.podReplacementPolicy;
  if (isSet(replacement)) {
    if (isSet(spec.podFailurePolicy)) {
      if (replacement !== 'Failed') out.push(notSupported(child(path, 'podReplacementPolicy'), replacement, ['Failed']));
    } else if (typeof replacement !== 'string' || !POD_REPLACEMENT_POLICIES.includes(replacement)) out.push(notSupported(child(path, 'podReplacementPolicy'), replacement, POD_REPLACEMENT_POLICIES));
  }
  out.push(...validatePodTemplate(spec.template, child(path, 'template'), { selector }));
  out.push(...restartPolicyRules(spec, path));
  return out;
}

/** Upstream ValidateHasLabel. */
function hasLabel(labels: Record<string, unknown>, path: string, key: string, expected: string): Cause[] {
  const p = `${path}.labels[${key}]`;
  if (!Object.hasOwn(labels, key)) return [required(p, expected)];
  return labels[key] === expected ? [] : [invalid(p, labels, `must be '${expected}'`)];
}

/** Upstream validateGeneratedSelector: without manualSelector, the selector and template labels are the generated ones. */
function validateGeneratedSelector(job: KObject, spec: Record<string, unknown>): Cause[] {
  if (spec.manualSelector === true) return [];
  const labels = rec(rec(rec(spec.template)?.metadata)?.labels);
  if (!labels || !isSet(spec.selector)) return [];
  const uid = job.metadata.uid ?? '';
  if (!uid) return [required('metadata.uid')];
  const tplPath = 'spec.template.metadata';
  const out = [
    ...hasLabel(labels, tplPath, LEGACY_CONTROLLER_UID_LABEL, uid),
    ...hasLabel(labels, tplPath, CONTROLLER_UID_LABEL, uid),
    ...hasLabel(labels, tplPath, LEGACY_JOB_NAME_LABEL, job.metadata.name ?? ''),
    ...hasLabel(labels, tplPath, JOB_NAME_LABEL, job.metadata.name ?? ''),
  ];
  const reqs = labelSelectorRequirements(spec.selector);
  if (reqs && !selectorMatchesLabels(reqs, { [CONTROLLER_UID_LABEL]: uid })) out.push(invalid('spec.selector', spec.selector, '`selector` not auto-generated'));
  return out;
}

/** Upstream ValidateJob (create, and the spec half of an update). */
export function validateJob(job: KObject): Cause[] {
  const spec = rec(job.spec) ?? {};
  const out = validateGeneratedSelector(job, spec);
  const selector = spec.selector;
  if (!isSet(selector)) out.push(required('spec.selector'));
  else out.push(...validateLabelSelector(selector, 'spec.selector'));
  out.push(...validateJobSpecBody(spec, 'spec', selector ?? undefined));
  const completions = num(spec.completions);
  if (spec.completionMode === 'Indexed' && completions !== undefined && completions > 0) {
    // The controller names index i's pods (and their hostname) <job>-<i>.
    const hostname = `${job.metadata.name ?? ''}-${completions - 1}`;
    if (dns1123LabelErrors(hostname).length > 0) out.push(invalid('metadata.name', job.metadata.name ?? '', `will not able to create pod with invalid DNS label: ${hostname}`));
  }
  return out;
}

/** The old template with the fields a suspended, never-started Job may change taken from the new one (upstream AllowMutableSchedulingDirectives). */
function schedulingMutable(oldTpl: Record<string, unknown>, newTpl: Record<string, unknown>): Record<string, unknown> {
  const tpl = structuredClone(oldTpl);
  const spec = (rec(tpl.spec) ?? {}) as Record<string, unknown>;
  const next = rec(newTpl.spec) ?? {};
  const meta = (rec(tpl.metadata) ?? {}) as Record<string, unknown>;
  const nextMeta = rec(newTpl.metadata) ?? {};
  for (const f of ['nodeSelector', 'tolerations', 'schedulingGates']) {
    if (next[f] === undefined) delete spec[f];
    else spec[f] = next[f];
  }
  for (const f of ['labels', 'annotations']) {
    if (nextMeta[f] === undefined) delete meta[f];
    else meta[f] = nextMeta[f];
  }
  const oldAff = rec(spec.affinity);
  const newAff = rec(next.affinity);
  if (!newAff && oldAff) {
    const rest = { ...oldAff };
    delete rest.nodeAffinity;
    if (Object.keys(rest).length === 0) delete spec.affinity;
    else spec.affinity = rest;
  } else if (newAff) {
    const base = { ...(oldAff ?? {}) };
    if (newAff.nodeAffinity === undefined) delete base.nodeAffinity;
    else base.nodeAffinity = newAff.nodeAffinity;
    spec.affinity = base;
  }
  tpl.spec = spec;
  tpl.metadata = meta;
  return tpl;
}

/** Upstream ValidateJobSpecUpdate's immutability rules. */
export function validateJobUpdate(job: KObject, old: KObject): Cause[] {
  const spec = rec(job.spec) ?? {};
  const oldSpec = rec(old.spec) ?? {};
  const out: Cause[] = [];
  const same = (f: string) => isDeepStrictEqual(spec[f] ?? null, oldSpec[f] ?? null);
  if (!same('completions')) {
    // Elastic Indexed Jobs: completions may change with parallelism, in tandem.
    if (spec.completionMode !== 'Indexed') out.push(immutable('spec.completions', spec.completions));
    else if (isSet(spec.completions) && spec.completions !== spec.parallelism) out.push(invalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism'));
  }
  for (const f of ['selector', 'completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']) if (!same(f)) out.push(immutable(`spec.${f}`, spec[f] ?? null));
  const tpl = rec(spec.template) ?? {};
  let oldTpl = rec(oldSpec.template) ?? {};
  const oldStatus = rec(old.status) ?? {};
  if (oldSpec.suspend === true && !isSet(oldStatus.startTime)) oldTpl = schedulingMutable(oldTpl, tpl);
  if (!isDeepStrictEqual(tpl, oldTpl)) out.push(immutable('spec.template', tpl));
  return out;
}

/** A subset of upstream ValidateJobUpdateStatus: counters are never negative; finished Jobs are not resumed. */
export function validateJobStatus(job: KObject): Cause[] {
  const status = rec(job.status) ?? {};
  const out: Cause[] = [];
  for (const f of ['active', 'succeeded', 'failed', 'ready', 'terminating']) out.push(...nonNegative(`status.${f}`, status[f]));
  return out;
}
