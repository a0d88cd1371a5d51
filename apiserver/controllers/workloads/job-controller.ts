import type { Logger } from 'pino';
import type { EventRecorder } from '../../../common/events/recorder';
import type { Clock } from '../../../common/informer/clock';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import type { Informer } from '../../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { JOB_CONTROLLER_NAME, JOB_TRACKING_FINALIZER } from '../../api/batch-names';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import type { KObject, OwnerReference } from '../../api/types';
import { str } from '../../registry/obj-access';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { claim, controllerRefOf, newControllerRef } from './controller-ref';
import { Expectations } from './expectations';
import type { BackoffRecord } from './job-backoff';
import { finishedType } from './job-conditions';
import { hasTrackingFinalizer, jobSpec } from './job-pods';
import { removeTrackingFinalizer } from './job-status';
import { syncJob, type SyncDeps } from './job-sync';
import { FinalizerExpectations } from './job-tracking';
import { PodControl } from './pod-control';

export interface JobControllerOptions {
  now: () => Date;
  log: Logger;
  recorder: EventRecorder;
  /** Timers of the work queues (deadlines, back-off); default real ones. */
  clock?: Clock;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Jobs synced at once (upstream --concurrent-job-syncs, default 5). */
  workers?: number;
}

const ctx = controllerContext('job-controller');

const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
const isBatchJobRef = (ref: OwnerReference) => ref.kind === 'Job' && (ref.apiVersion ?? '').split('/')[0] === 'batch';

/**
 * Upstream's Job controller: one informer over Jobs and one over pods, a work queue of Job keys,
 * and a second queue of orphaned pods whose tracking finalizer must come off (their Job is gone or
 * finished). The sync itself is job-sync.ts.
 */
export class JobController {
  private readonly informers: StoreInformers;
  private readonly expectations: Expectations;
  private readonly finalizerExpectations = new FinalizerExpectations();
  private readonly backoff = new Map<string, BackoffRecord>();
  /** The resourceVersion of the last status written per Job: an older cached Job is not synced (its update is on the way). */
  private readonly written = new Map<string, number>();
  private queue = new WorkQueue();
  private orphans = new WorkQueue();
  private jobs?: Informer<KObject>;
  private pods?: Informer<KObject>;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: JobControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.expectations = new Expectations(() => opts.now().getTime());
  }

  private type(group: string, resource: string): ResourceType {
    const t = this.registry.lookup(group, 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue({ clock: this.opts.clock });
    this.orphans = new WorkQueue({ clock: this.opts.clock });
    const jobs = (this.jobs = this.informers.informer(this.type('batch', 'jobs')));
    const pods = (this.pods = this.informers.informer(this.type('', 'pods')));
    jobs.addEventHandler(
      {
        onAdd: (j) => this.queue.add(keyOf(j)),
        onUpdate: (_old, j) => this.queue.add(keyOf(j)),
        onDelete: (j) => this.jobDeleted(j),
      },
      { signal },
    );
    pods.addEventHandler({ onAdd: (p) => this.podAdded(p), onUpdate: (o, p) => this.podUpdated(o, p), onDelete: (p) => this.podDeleted(p) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, jobs, pods))) return;
    const onError = (what: string) => (key: string, err: unknown) => this.opts.log.warn({ err, [what]: key }, `job controller: ${what} sync failed; retrying`);
    await Promise.all([
      runWorkers(this.queue, (key) => this.sync(key), signal, { workers: this.opts.workers ?? 5, onError: onError('job') }),
      runWorkers(this.orphans, (key) => this.syncOrphanPod(key), signal, { onError: onError('pod') }),
    ]);
  }

  /** The Job a controller reference names, if the cache has it with that uid. */
  private resolve(namespace: string, ref: OwnerReference | undefined): KObject | undefined {
    if (!ref || !isBatchJobRef(ref)) return undefined;
    const job = this.jobs?.get(`${namespace}/${ref.name}`);
    return job && job.metadata.uid === ref.uid ? job : undefined;
  }

  /** Jobs of the namespace whose selector matches an orphan pod (adoption candidates). */
  private jobsSelecting(pod: KObject): KObject[] {
    const jobs = this.jobs?.store.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? '') ?? [];
    return jobs.filter((j) => {
      const reqs = labelSelectorRequirements(jobSpec(j).selector);
      return reqs !== null && reqs.length > 0 && selectorMatchesLabels(reqs, pod.metadata.labels);
    });
  }

  private podAdded(pod: KObject): void {
    if (pod.metadata.deletionTimestamp) return this.podGoing(pod, false);
    const ref = controllerRefOf(pod);
    if (ref) {
      const job = this.resolve(pod.metadata.namespace ?? '', ref);
      if (job) {
        this.expectations.creationObserved(keyOf(job));
        this.queue.add(keyOf(job));
      }
      // A pod still tracked by a Job that is gone or finished (a backup: finished Jobs count all their pods first).
      if (hasTrackingFinalizer(pod) && isBatchJobRef(ref) && (!job || finishedType(job))) this.orphans.add(keyOf(pod));
      return;
    }
    if (hasTrackingFinalizer(pod)) this.orphans.add(keyOf(pod));
    for (const j of this.jobsSelecting(pod)) this.queue.add(keyOf(j));
  }

  private podUpdated(old: KObject, pod: KObject): void {
    if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    const ns = pod.metadata.namespace ?? '';
    const job = this.resolve(ns, controllerRefOf(pod));
    if (job && hasTrackingFinalizer(old) && !hasTrackingFinalizer(pod)) this.finalizerExpectations.observed(keyOf(job), pod.metadata.uid ?? '');
    const oldJob = this.resolve(ns, controllerRefOf(old));
    if (oldJob && oldJob.metadata.uid !== job?.metadata.uid) this.queue.add(keyOf(oldJob));
    if (pod.metadata.deletionTimestamp) return this.podGoing(pod, false);
    if (job && hasTrackingFinalizer(pod) && finishedType(job)) this.orphans.add(keyOf(pod));
    if (job) return this.queue.add(keyOf(job));
    const ref = controllerRefOf(pod);
    if (hasTrackingFinalizer(pod) && (!ref || isBatchJobRef(ref))) this.orphans.add(keyOf(pod));
    if (!ref) for (const j of this.jobsSelecting(pod)) this.queue.add(keyOf(j));
  }

  private podDeleted(pod: KObject): void {
    this.podGoing(pod, true);
  }

  /** A pod being deleted (gone: it left the store, so its finalizer is gone too). */
  private podGoing(pod: KObject, gone: boolean): void {
    const ref = controllerRefOf(pod);
    const job = this.resolve(pod.metadata.namespace ?? '', ref);
    if (!job) {
      if (!gone && hasTrackingFinalizer(pod) && (!ref || isBatchJobRef(ref))) this.orphans.add(keyOf(pod));
      return;
    }
    const key = keyOf(job);
    if (gone) this.finalizerExpectations.observed(key, pod.metadata.uid ?? '');
    this.expectations.deletionObserved(key, pod.metadata.uid);
    this.queue.add(key);
  }

  /** Upstream cleanupPodFinalizers: pods of a deleted Job lose their finalizer through the orphan queue. */
  private jobDeleted(job: KObject): void {
    this.queue.add(keyOf(job));
    for (const p of this.pods?.store.byIndex(NAMESPACE_INDEX, job.metadata.namespace ?? '') ?? []) {
      if (controllerRefOf(p)?.uid === job.metadata.uid && hasTrackingFinalizer(p)) this.orphans.add(keyOf(p));
    }
  }

  private deps(): SyncDeps {
    const pods = this.type('', 'pods');
    return {
      store: this.store,
      jobs: this.type('batch', 'jobs'),
      pods,
      ctx,
      podControl: new PodControl(this.store, pods, this.opts.recorder, ctx),
      expectations: this.expectations,
      finalizerExpectations: this.finalizerExpectations,
      recorder: this.opts.recorder,
      now: this.opts.now,
      backoff: this.backoff,
      requeueAfter: (key, ms) => this.queue.addAfter(key, ms),
      saveBackoff: (c) => this.backoff.set(c.key, c.newBackoff),
      written: (key, rv) => this.written.set(key, Number(rv)),
    };
  }

  /** Claims the pods of the Job's namespace: its own, and orphans its selector matches (adopted with the tracking finalizer). */
  private async podsFor(job: KObject): Promise<KObject[]> {
    const candidates = this.pods?.store.byIndex(NAMESPACE_INDEX, job.metadata.namespace ?? '') ?? [];
    return claim(this.store, job, candidates, {
      selector: jobSpec(job).selector,
      ref: newControllerRef(job, 'batch/v1', 'Job'),
      type: this.type('', 'pods'),
      ctx,
      finalizers: [JOB_TRACKING_FINALIZER],
    });
  }

  async sync(key: string): Promise<void> {
    const job = this.jobs?.get(key);
    if (!job) {
      this.expectations.delete(key);
      this.finalizerExpectations.delete(key);
      this.backoff.delete(key);
      this.written.delete(key);
      return;
    }
    // Our own last status write has not reached the cache yet: a sync now would work from the
    // status before it and fail its write on the conflict; the write's event queues the Job again.
    if (Number(job.metadata.resourceVersion) < (this.written.get(key) ?? 0)) return;
    // Expectations first: a pod arriving after this read is seen by the next sync. The same holds
    // for finalizer removals: the informer caches a pod before its handlers run, so a uid no longer
    // expected here is already seen without its finalizer (or gone) in the list read next. Read
    // after the list (upstream's order), a removal observed while the pods are claimed would leave
    // the list's stale copy (deleted, finalizer on) unexpected, and it would count as failed.
    const satisfied = this.expectations.satisfied(key);
    const expectedRmFinalizers = this.finalizerExpectations.expected(key);
    const pods = await this.podsFor(job);
    await syncJob(this.deps(), key, job, pods, { satisfied, expectedRmFinalizers });
  }

  /** Upstream syncOrphanPod: the finalizer comes off a pod whose Job is gone or finished (never one of another controller). */
  private async syncOrphanPod(key: string): Promise<void> {
    const pod = this.pods?.get(key);
    if (!pod || !hasTrackingFinalizer(pod)) return;
    const ref = controllerRefOf(pod);
    if (ref) {
      if (!isBatchJobRef(ref)) return;
      const job = this.resolve(pod.metadata.namespace ?? '', ref);
      const managedBy = job ? str(jobSpec(job).managedBy) : undefined;
      if (managedBy !== undefined && managedBy !== JOB_CONTROLLER_NAME) return;
      if (job && !finishedType(job)) return;
    }
    await removeTrackingFinalizer({ store: this.store, ctx }, this.type('', 'pods'), pod, JOB_TRACKING_FINALIZER);
  }
}
