/** Representative batch/v1 objects for the protobuf and CBOR tests: every JobSpec, JobStatus and CronJob field once. */

const meta = (name: string, namespace: string) => ({ name, namespace, uid: `uid-${name}`, resourceVersion: '42', creationTimestamp: '2025-03-01T12:00:00Z', generation: 2 });

const podTemplate = {
  metadata: { labels: { 'batch.kubernetes.io/job-name': 'pi', 'batch.kubernetes.io/controller-uid': 'uid-pi' } },
  spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl:5.34', command: ['perl', '-Mbignum=bpi', '-wle', 'print bpi(20)'] }] },
};

export const jobFixture = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: meta('pi', 'shop'),
  spec: {
    parallelism: 2,
    completions: 4,
    activeDeadlineSeconds: 600,
    podFailurePolicy: {
      rules: [
        { action: 'FailJob', onExitCodes: { containerName: 'pi', operator: 'In', values: [3, 42] } },
        { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      ],
    },
    successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }] },
    backoffLimit: 0,
    backoffLimitPerIndex: 1,
    maxFailedIndexes: 2,
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'uid-pi' } },
    manualSelector: false,
    template: podTemplate,
    ttlSecondsAfterFinished: 100,
    completionMode: 'Indexed',
    suspend: false,
    podReplacementPolicy: 'Failed',
    managedBy: 'kubernetes.io/job-controller',
  },
  status: {
    conditions: [{ type: 'SuccessCriteriaMet', status: 'True', lastProbeTime: '2025-03-01T12:01:00Z', lastTransitionTime: '2025-03-01T12:01:00Z', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }],
    startTime: '2025-03-01T12:00:01Z',
    completionTime: '2025-03-01T12:01:00Z',
    active: 1,
    succeeded: 3,
    terminating: 0,
    completedIndexes: '0-2',
    failedIndexes: '',
    uncountedTerminatedPods: { succeeded: ['uid-a'], failed: ['uid-b'] },
    ready: 0,
  },
};

export const cronJobFixture = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: meta('hello', 'shop'),
  spec: {
    schedule: '*/5 * * * *',
    timeZone: 'Europe/Paris',
    startingDeadlineSeconds: 200,
    concurrencyPolicy: 'Forbid',
    suspend: true,
    jobTemplate: { metadata: { labels: { app: 'hello' } }, spec: { backoffLimit: 2, template: podTemplate } },
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
  },
  status: {
    active: [{ kind: 'Job', namespace: 'shop', name: 'hello-29015340', uid: 'uid-j', apiVersion: 'batch/v1', resourceVersion: '40' }],
    lastScheduleTime: '2025-03-01T12:00:00Z',
    lastSuccessfulTime: '2025-03-01T11:55:07Z',
  },
};
