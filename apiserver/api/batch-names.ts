/**
 * Labels, annotations and the finalizer of batch/v1 (upstream k8s.io/api/batch/v1 types.go).
 *
 * Stored in upstream's kubernetes.io spelling, unlike svc's own keys (well-known.ts), because
 * clients read them literally: label selectors stay literal (`kubectl get pods -l
 * batch.kubernetes.io/job-name=pi`, `kubectl logs -l job-name=pi`), the Job's own selector is
 * matched against them, and the JOB_COMPLETION_INDEX variable reads the index through the downward
 * API by this name. Where the controllers read a key a user might also have written in the svc.io
 * spelling (the completion index), they accept both (group-names.ts bothKeys).
 */

/** The Job's name on its pods (and the legacy unprefixed spelling, also set, as upstream). */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_JOB_NAME_LABEL = 'job-name';

/** The Job's uid on its pods; the generated selector matches this one label. */
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';

/** An Indexed Job pod's completion index: an annotation and (upstream PodIndexLabel, GA) a label. */
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';

/** The variable every container of an Indexed Job's pods gets, from the index label. */
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/** Held on every pod the Job controller creates until the pod's outcome is counted in the Job's status. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** Failures of the pod's index so far, with backoffLimitPerIndex (counted and ignored). */
export const JOB_INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const JOB_INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';

/** The time a CronJob's Job was scheduled for, RFC 3339 in the CronJob's zone. */
export const CRONJOB_SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

/** `kubectl create job --from=cronjob/x` marks the Job it makes (annotation value "manual"). */
export const CRONJOB_INSTANTIATE = 'cronjob.kubernetes.io/instantiate';

/** spec.managedBy of Jobs the built-in controller syncs (absent means the same). */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';
