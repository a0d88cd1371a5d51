import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeJobType } from '../../../../../apiserver/registry/types/jobs';
import { ago, cells, fields, now } from './fixtures';

const jobType = makeJobType(now);
const UID = '0f5c1b7e-5d7e-4a8e-9c1a-7d1f0e2b3c4d';

function job(spec: Record<string, unknown> = {}, name = 'pi'): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default', uid: UID, creationTimestamp: ago(120_000) },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl' }] } }, ...spec },
  };
}

function defaulted(o: KObject): KObject {
  jobType.defaults!(o);
  return o;
}

const messages = (o: KObject, old?: KObject) => jobType.validate!(o, old).map((c) => `${c.field}: ${c.message}`);

test('defaults as upstream SetDefaults_Job, and the generated selector and labels (shown on the Job too)', (t) => {
  const o = defaulted(job());
  const spec = o.spec as Record<string, any>;
  t.like(spec, { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, manualSelector: false, podReplacementPolicy: 'TerminatingOrFailed' });
  t.deepEqual(spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } });
  const labels = { 'batch.kubernetes.io/controller-uid': UID, 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': UID, 'job-name': 'pi' };
  t.deepEqual(spec.template.metadata.labels, labels);
  t.deepEqual(o.metadata.labels, labels);
  t.like(spec.template.spec, { dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler' });
  t.deepEqual(messages(o), []);
  // Only parallelism set: completions stays unset (a work queue Job).
  t.like(defaulted(job({ parallelism: 3 })).spec, { parallelism: 3, completions: undefined });
  // backoffLimitPerIndex makes backoffLimit MaxInt32; a podFailurePolicy makes replacement wait for Failed.
  t.like(defaulted(job({ completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1 })).spec, { backoffLimit: 2147483647 });
  const pfp = defaulted(job({ podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } })).spec as Record<string, any>;
  t.is(pfp.podReplacementPolicy, 'Failed');
  t.is(pfp.podFailurePolicy.rules[0].onPodConditions[0].status, 'True');
  // A manual selector generates nothing; the Job's own labels are kept.
  const manual = defaulted({ ...job({ manualSelector: true, selector: { matchLabels: { app: 'x' } } }), metadata: { name: 'm', uid: UID, labels: { mine: 'yes' } } });
  (manual.spec as any).template.metadata = { labels: { app: 'x' } };
  jobType.defaults!(manual);
  t.deepEqual((manual.spec as any).selector, { matchLabels: { app: 'x' } });
  t.deepEqual(manual.metadata.labels, { mine: 'yes' });
});

test('restart policy, counters and completion mode rules with upstream messages', (t) => {
  const always = defaulted(job());
  (always.spec as any).template.spec.restartPolicy = 'Always';
  t.deepEqual(messages(always), ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']);
  const neg = defaulted(job({ parallelism: -1, backoffLimit: -2, completionMode: 'Sometimes' }));
  t.deepEqual(fields(jobType.validate!(neg)), ['spec.parallelism', 'spec.backoffLimit', 'spec.completionMode']);
  const indexed = defaulted(job({ completionMode: 'Indexed', completions: undefined, parallelism: 2 }));
  delete (indexed.spec as any).completions;
  t.true(messages(indexed).includes('spec.completions: Required value: when completion mode is Indexed'));
  const perIndex = defaulted(job({ backoffLimitPerIndex: 1, maxFailedIndexes: 1 }));
  t.deepEqual(messages(perIndex), ['spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode', 'spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode']);
  const longName = defaulted(job({ completionMode: 'Indexed', completions: 1000 }, 'x'.repeat(60)));
  t.true(messages(longName).some((m) => m.startsWith('metadata.name: Invalid value:') && m.endsWith(`will not able to create pod with invalid DNS label: ${'x'.repeat(60)}-999`)));
});

test('the generated selector and labels cannot be replaced', (t) => {
  const o = defaulted(job());
  (o.spec as any).template.metadata.labels['controller-uid'] = 'someone-else';
  t.deepEqual(messages(o), [`spec.template.metadata.labels[controller-uid]: Invalid value: ${JSON.stringify((o.spec as any).template.metadata.labels)}: must be '${UID}'`]);
  const sel = defaulted(job({ selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'other' } } }));
  t.true(messages(sel).some((m) => m.startsWith('spec.selector: Invalid value:') && m.endsWith('`selector` not auto-generated')));
});

test('podFailurePolicy and successPolicy rules', (t) => {
  const bad = defaulted(
    job({
      podFailurePolicy: {
        rules: [
          { action: 'Explode', onExitCodes: { operator: 'In', values: [0, 5, 3, 3] } },
          { action: 'FailIndex', onExitCodes: { containerName: 'nope', operator: 'Maybe', values: [1] } },
          { action: 'Count' },
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'Perhaps' }] },
        ],
      },
    }),
  );
  t.deepEqual(messages(bad), [
    'spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
    'spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator',
    'spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 3',
    'spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,5,3,3]: must be ordered',
    'spec.podFailurePolicy.rules[1].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
    'spec.podFailurePolicy.rules[1].onExitCodes.operator: Unsupported value: "Maybe": supported values: "In", "NotIn"',
    'spec.podFailurePolicy.rules[1].onExitCodes.containerName: Invalid value: "nope": must be one of the container or initContainer names in the pod template',
    'spec.podFailurePolicy.rules[2]: Invalid value: "": specifying one of OnExitCodes and OnPodConditions is required',
    'spec.podFailurePolicy.rules[3].onPodConditions[0].status: Unsupported value: "Perhaps": supported values: "False", "True", "Unknown"',
  ]);
  const onFailure = defaulted(job({ podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } }] } }));
  (onFailure.spec as any).template.spec.restartPolicy = 'OnFailure';
  t.deepEqual(messages(onFailure), ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified']);
  const success = defaulted(job({ successPolicy: { rules: [{ succeededIndexes: '0,2-1', succeededCount: 9 }, {}] }, completionMode: 'Indexed', completions: 3 }));
  t.deepEqual(messages(success), [
    'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0,2-1": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1',
    'spec.successPolicy.rules[0].succeededCount: Invalid value: 9: must be less than or equal to 3 (the number of specified completions)',
    'spec.successPolicy.rules[0].succeededCount: Invalid value: 9: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)',
    'spec.successPolicy.rules[1]: Required value: at least one of succeededCount or succeededIndexes must be specified',
  ]);
});

test('updates: selector, completions, completion mode and template are immutable; a suspended, never started Job may move', (t) => {
  const old = defaulted(job());
  const changed = structuredClone(old);
  (changed.spec as any).completions = 2;
  (changed.spec as any).template.spec.containers[0].image = 'perl:2';
  (changed.spec as any).completionMode = 'Indexed';
  t.deepEqual(fields(jobType.validateUpdate!(changed, old)), ['spec.completions', 'spec.completionMode', 'spec.template']);
  const suspended = defaulted(job({ suspend: true }));
  const moved = structuredClone(suspended);
  (moved.spec as any).template.spec.nodeSelector = { disk: 'ssd' };
  (moved.spec as any).template.metadata.annotations = { a: 'b' };
  t.deepEqual(jobType.validateUpdate!(moved, suspended), []);
  const started = { ...structuredClone(suspended), status: { startTime: ago(1000) } };
  t.deepEqual(fields(jobType.validateUpdate!(moved, started)), ['spec.template']);
  // Elastic Indexed Jobs: completions with parallelism.
  const elastic = defaulted(job({ completionMode: 'Indexed', completions: 2, parallelism: 2 }));
  const scaled = structuredClone(elastic);
  Object.assign(scaled.spec as object, { completions: 4, parallelism: 4 });
  t.deepEqual(jobType.validateUpdate!(scaled, elastic), []);
  (scaled.spec as any).parallelism = 3;
  t.deepEqual(jobType.validateUpdate!(scaled, elastic).map((c) => c.message), ['Invalid value: 4: can only be modified in tandem with spec.parallelism']);
});

test('kubectl columns: STATUS, COMPLETIONS, DURATION, AGE; wide adds containers, images and the selector', (t) => {
  const o = defaulted(job());
  t.deepEqual(cells(jobType, o), {
    Status: 'Running',
    Completions: '0/1',
    Duration: '',
    Age: '2m',
    Containers: 'pi',
    Images: 'perl',
    Selector: `batch.kubernetes.io/controller-uid=${UID}`,
  });
  o.status = { startTime: ago(100_000), completionTime: ago(40_000), succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] };
  t.like(cells(jobType, o), { Status: 'Complete', Completions: '1/1', Duration: '60s' });
  o.status = { startTime: ago(30_000), conditions: [{ type: 'Suspended', status: 'True' }] };
  t.like(cells(jobType, o), { Status: 'Suspended', Duration: '30s' });
  o.status = { conditions: [{ type: 'FailureTarget', status: 'True' }, { type: 'Failed', status: 'True' }] };
  t.like(cells(jobType, o), { Status: 'Failed' });
  const workQueue = defaulted(job({ parallelism: 3 }));
  t.like(cells(jobType, workQueue), { Completions: '0/1 of 3' });
});
