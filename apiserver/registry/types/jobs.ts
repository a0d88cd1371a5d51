import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from '../../api/batch-names';
import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { formatLabelSelector } from '../../api/label-selector';
import { containerCells } from '../container-cells';
import { ensureRec, num, rec, recs, setDefault, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { ageColumn, column, humanDuration, type Now } from '../table';
import { jobSchema } from './job-schema';
import { validateJob, validateJobStatus, validateJobUpdate } from './job-validation';
import { defaultPodTemplate } from './pod-template';

/**
 * batch/v1 Job: upstream's defaults (SetDefaults_Job), the generated selector and pod labels of
 * its create strategy, validation, and `kubectl get jobs` columns. The controller is
 * controllers/workloads/job-controller.ts.
 */

/** MaxInt32: backoffLimit's default when backoffLimitPerIndex is set. */
const MAX_INT32 = 2147483647;

/** Upstream SetDefaults_Job's spec part (a CronJob's jobTemplate gets none of these, as upstream). */
export function defaultJobSpec(spec: Record<string, unknown>): void {
  if ((spec.completions === undefined || spec.completions === null) && (spec.parallelism === undefined || spec.parallelism === null)) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  setDefault(spec, 'parallelism', 1, false);
  setDefault(spec, 'backoffLimit', spec.backoffLimitPerIndex !== undefined && spec.backoffLimitPerIndex !== null ? MAX_INT32 : 6, false);
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false, false);
  const policy = rec(spec.podFailurePolicy);
  for (const rule of recs(policy?.rules)) for (const p of recs(rule.onPodConditions)) setDefault(p, 'status', 'True');
  setDefault(spec, 'podReplacementPolicy', policy ? 'Failed' : 'TerminatingOrFailed');
  setDefault(spec, 'manualSelector', false, false);
}

/**
 * Upstream generateSelector: the template gets job-name and controller-uid labels (both
 * spellings) unless it has them, and the selector matches controller-uid. Needs the uid, which the
 * store assigns before defaulting.
 */
function generateSelector(job: KObject, spec: Record<string, unknown>): void {
  const uid = job.metadata.uid;
  if (!uid) return;
  const meta = ensureRec(ensureRec(spec, 'template'), 'metadata');
  const labels = ensureRec(meta, 'labels');
  for (const k of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) if (!Object.hasOwn(labels, k)) labels[k] = job.metadata.name ?? '';
  for (const k of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) if (!Object.hasOwn(labels, k)) labels[k] = uid;
  const selector = ensureRec(spec, 'selector');
  const matchLabels = ensureRec(selector, 'matchLabels');
  if (!Object.hasOwn(matchLabels, CONTROLLER_UID_LABEL)) matchLabels[CONTROLLER_UID_LABEL] = uid;
}

export function defaultJob(job: KObject): void {
  const spec = ensureRec(job, 'spec');
  defaultJobSpec(spec);
  defaultPodTemplate(spec.template);
  if (spec.manualSelector !== true) generateSelector(job, spec);
  // Upstream: a Job without labels takes its template's; the template's map is shared there, so
  // the generated labels show on the Job too (as they do when read back).
  const tplLabels = rec(rec(rec(spec.template)?.metadata)?.labels);
  if (tplLabels && Object.keys(job.metadata.labels ?? {}).length === 0) job.metadata.labels = { ...(tplLabels as Record<string, string>) };
}

type Condition = { type?: unknown; status?: unknown };

/** Whether the Job has the condition with status True (upstream hasJobCondition). */
export function hasJobCondition(job: KObject, type: string): boolean {
  return recs(rec(job.status)?.conditions).some((c: Condition) => c.type === type && c.status === 'True');
}

/** Upstream printJob's STATUS (kubectl 1.30+). */
function jobStatusCell(job: KObject): string {
  if (hasJobCondition(job, 'Complete')) return 'Complete';
  if (hasJobCondition(job, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp) return 'Terminating';
  if (hasJobCondition(job, 'Suspended')) return 'Suspended';
  if (hasJobCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasJobCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function completionsCell(job: KObject): string {
  const spec = rec(job.spec) ?? {};
  const succeeded = num(rec(job.status)?.succeeded) ?? 0;
  const completions = num(spec.completions);
  if (completions !== undefined) return `${succeeded}/${completions}`;
  const parallelism = num(spec.parallelism) ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function durationCell(job: KObject, now: Now): string {
  const status = rec(job.status) ?? {};
  const start = Date.parse(str(status.startTime) ?? '');
  if (!Number.isFinite(start)) return '';
  const end = Date.parse(str(status.completionTime) ?? '');
  return humanDuration((Number.isFinite(end) ? end : now()) - start);
}

export function jobColumns(now: Now): TableColumn[] {
  const podSpec = (o: KObject) => rec(rec(o.spec)?.template)?.spec;
  return [
    column('Status', 'string', 'Status of the job.', jobStatusCell),
    column('Completions', 'string', 'The number of pods which reached phase Succeeded.', completionsCell),
    column('Duration', 'string', 'Time required to complete the job.', (o) => durationCell(o, now)),
    ageColumn(now),
    column('Containers', 'string', 'Names of each container in the template.', (o) => containerCells(podSpec(o)).names, 1),
    column('Images', 'string', 'Images referenced by each container in the template.', (o) => containerCells(podSpec(o)).images, 1),
    column('Selector', 'string', 'A label query over pods that should match the pod count.', (o) => formatLabelSelector(rec(o.spec)?.selector), 1),
  ];
}

function validate(job: KObject, _old?: KObject, subresource?: string): Cause[] {
  if (subresource === 'status') return validateJobStatus(job);
  return validateJob(job);
}

function validateUpdate(job: KObject, old: KObject, subresource?: string): Cause[] {
  if (subresource === 'status') return [];
  return validateJobUpdate(job, old);
}

export function makeJobType(now: Now = Date.now): ResourceType {
  return {
    group: 'batch',
    version: 'v1',
    resource: 'jobs',
    singular: 'job',
    kind: 'Job',
    listKind: 'JobList',
    namespaced: true,
    categories: ['all'],
    schema: jobSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: jobColumns(now),
    defaults: defaultJob,
    validate,
    validateUpdate,
    // Upstream's batch/v1 Jobs orphan their pods unless the delete says otherwise (kubectl sends Background).
    deletion: {
      defaultPropagation: {
        policy: 'Orphan',
        warning: 'child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning',
      },
    },
  };
}

export const jobType: ResourceType = makeJobType();
