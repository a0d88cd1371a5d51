/**
 * Fixture for the batch controller tests: the store fixture (real store, fake clock), fake timers
 * behind the work queues' clock, a recording event recorder, and helpers to wait for the store to
 * reach a state (by watch events, no sleeps) and to play the node's part on pods.
 */
import type { EventObjectRef, EventRecorder } from '../../../../../common/events/recorder';
import type { Clock } from '../../../../../common/informer/clock';
import { rfc3339 } from '../../../../../apiserver/api/time';
import type { KObject } from '../../../../../apiserver/api/types';
import type { ResourceType } from '../../../../../apiserver/registry/resource-type';
import { StoreInformers } from '../../../../../apiserver/store/list-watch';
import { FakeTimers } from '../../scheduler/fake-timers';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';

export interface RecordedEvent {
  kind: string;
  name: string;
  type: string;
  reason: string;
  message: string;
}

export interface Batch {
  f: Fixture;
  timers: FakeTimers;
  clock: Clock;
  events: RecordedEvent[];
  recorder: EventRecorder;
  informers: StoreInformers;
  jobs: ResourceType;
  cronJobs: ResourceType;
  pods: ResourceType;
  /** Aborts every loop started with start(). */
  signal: AbortSignal;
  /** Runs a loop until teardown; returns a stop function that waits for it. */
  start(run: (signal: AbortSignal) => Promise<void>): () => Promise<void>;
}

export async function openBatch(t: { teardown(fn: () => Promise<void>): void }): Promise<Batch> {
  const f = await openFixture();
  const timers = new FakeTimers(f.clock);
  const clock: Clock = { now: () => f.clock.ms, after: (ms, fn) => timers.after(ms, fn) };
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = {
    event: (ref: EventObjectRef, type, reason, message) => void events.push({ kind: ref.kind, name: ref.name, type, reason, message }),
  };
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  // Informers keep real time (their watch timeouts stay out of the fake timers); queues use fake time.
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  t.teardown(async () => {
    ac.abort();
    await Promise.allSettled(runs);
    await f.close();
  });
  return {
    f,
    timers,
    clock,
    events,
    recorder,
    informers,
    jobs: f.type('batch', 'v1', 'jobs'),
    cronJobs: f.type('batch', 'v1', 'cronjobs'),
    pods: f.type('', 'v1', 'pods'),
    signal: ac.signal,
    start(run) {
      const own = new AbortController();
      const stop = () => own.abort();
      ac.signal.addEventListener('abort', stop, { once: true });
      const p = run(own.signal);
      runs.push(p);
      return async () => {
        own.abort();
        await p;
      };
    },
  };
}

/**
 * Re-evaluates check after every store change (and, given timers, every timer set) until it
 * answers something; bounded by the test timeout.
 */
export async function until<T>(f: Fixture, check: () => T | undefined | false | Promise<T | undefined | false>, timers?: FakeTimers): Promise<T> {
  for (;;) {
    const from = f.cache.currentRevision();
    const timerSet = timers?.nextTimer();
    const v = await check();
    if (v !== undefined && v !== false) return v;
    // One watch per wait, ended by its own signal (an async generator's return() would wait for its pending next()).
    const ac = new AbortController();
    const it = f.cache.watch('/', from, ac.signal)[Symbol.asyncIterator]();
    try {
      await Promise.race([it.next(), ...(timerSet ? [timerSet] : [])]);
    } finally {
      ac.abort();
    }
  }
}

/** Waits until a fake timer of exactly ms is pending (a controller asked to come back then). */
export function timerSet(b: Batch, ms: number): Promise<true> {
  return until(b.f, () => b.timers.delays().includes(ms), b.timers);
}

export async function listAll(b: Batch, t: ResourceType, namespace = 'default'): Promise<KObject[]> {
  return (await b.f.store.list(t, namespace, { labelSelector: [], fieldSelector: [] })).items;
}

/** The pods a Job controls, by creation order then name. */
export async function podsOf(b: Batch, job: KObject): Promise<KObject[]> {
  const pods = await listAll(b, b.pods, job.metadata.namespace ?? 'default');
  return pods.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
}

export async function getJob(b: Batch, name: string, namespace = 'default'): Promise<KObject> {
  return b.f.store.get(b.jobs, namespace, name);
}

/** Plays the node's part: the pod ends in phase with the container's exit code (and extra status fields). */
export async function finishPod(b: Batch, pod: KObject, phase: 'Succeeded' | 'Failed', exitCode?: number, extra: Record<string, unknown> = {}): Promise<void> {
  const code = exitCode ?? (phase === 'Succeeded' ? 0 : 1);
  const name = String((pod.spec as { containers?: Array<{ name: string }> }).containers?.[0]?.name ?? 'main');
  await b.f.store.update(
    b.pods,
    pod.metadata.namespace ?? 'default',
    pod.metadata.name!,
    (cur) => {
      cur!.status = {
        phase,
        containerStatuses: [{ name, ready: false, restartCount: 0, image: 'busybox', imageID: '', state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error', finishedAt: rfc3339(b.f.clock.now()) } } }],
        ...extra,
      };
      delete cur!.metadata.resourceVersion;
      return cur!;
    },
    { ...adminCtx, subresource: 'status' },
  );
}

/** A Job for the tests: one container `main`, restartPolicy Never. */
export function jobOf(name: string, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['true'] }], ...podSpec } }, ...spec },
  };
}

export const statusOf = (j: KObject) => (j.status ?? {}) as Record<string, any>;
export const conditionTypes = (j: KObject) => ((statusOf(j).conditions ?? []) as Array<{ type: string; status: string }>).filter((c) => c.status === 'True').map((c) => c.type);
export { adminCtx };
