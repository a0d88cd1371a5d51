import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { EventRecorder } from '../../../common/events/recorder';
import type { Clock } from '../../../common/informer/clock';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import type { Informer } from '../../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import type { KObject } from '../../api/types';
import { processTimeZone } from '../../api/zoned-time';
import { num, rec, str } from '../../registry/obj-access';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { controllerRefOf } from './controller-ref';
import { nextScheduleTimeDuration } from './cronjob-schedule';
import { deleteJob, readCronStatus, scheduleOf, syncCronJob, type CronStatus, type CronSyncDeps } from './cronjob-sync';
import { finishedType } from './job-conditions';
import { refTo } from './pod-control';

export interface CronJobControllerOptions {
  now: () => Date;
  log: Logger;
  recorder: EventRecorder;
  /** The zone of schedules without spec.timeZone; default the process's (upstream: the controller manager's). */
  timeZone?: string;
  /** Timers of the queue (the next scheduled times); default real ones. */
  clock?: Clock;
  informers?: StoreInformers;
}

const ctx = controllerContext('cronjob-controller');
const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** Upstream byJobStartTime: started Jobs by start time (then name) before unstarted ones. */
function byStartTime(a: KObject, b: KObject): number {
  const sa = Date.parse(str(rec(a.status)?.startTime) ?? '');
  const sb = Date.parse(str(rec(b.status)?.startTime) ?? '');
  if (!Number.isFinite(sb)) return Number.isFinite(sa) ? -1 : 0;
  if (!Number.isFinite(sa)) return 1;
  return sa === sb ? (a.metadata.name! < b.metadata.name! ? -1 : 1) : sa - sb;
}

/**
 * Upstream's CronJob controller (ControllerV2): CronJobs and Jobs through informers, one queue of
 * CronJob keys, each sync queued again for its next scheduled time. The sync is cronjob-sync.ts;
 * history limits are applied here first, as upstream's cleanupFinishedJobs.
 */
export class CronJobController {
  private readonly informers: StoreInformers;
  private queue = new WorkQueue();
  private cronJobs?: Informer<KObject>;
  private jobs?: Informer<KObject>;
  /** resourceVersion of the last status written per CronJob: older cached copies are not synced. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: CronJobControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  private type(resource: string): ResourceType {
    const t = this.registry.lookup('batch', 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }

  private deps(): CronSyncDeps {
    return { store: this.store, jobs: this.type('jobs'), ctx, recorder: this.opts.recorder, now: this.opts.now, localZone: this.opts.timeZone ?? processTimeZone() };
  }

  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue({ clock: this.opts.clock });
    const cronJobs = (this.cronJobs = this.informers.informer(this.type('cronjobs')));
    const jobs = (this.jobs = this.informers.informer(this.type('jobs')));
    cronJobs.addEventHandler({ onAdd: (cj) => this.queue.add(keyOf(cj)), onUpdate: (o, cj) => this.cronJobUpdated(o, cj) }, { signal });
    const parent = (j: KObject) => {
      const ref = controllerRefOf(j);
      if (ref?.kind === 'CronJob') this.queue.add(`${j.metadata.namespace}/${ref.name}`);
    };
    jobs.addEventHandler(
      {
        onAdd: parent,
        onUpdate: (o, j) => {
          if (o.metadata.resourceVersion === j.metadata.resourceVersion) return;
          if (controllerRefOf(o)?.uid !== controllerRefOf(j)?.uid) parent(o);
          parent(j);
        },
        onDelete: parent,
      },
      { signal },
    );
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, cronJobs, jobs))) return;
    await runWorkers(this.queue, (key) => this.sync(key), signal, {
      workers: 5,
      onError: (key, err) => this.opts.log.warn({ err, cronjob: key }, 'cronjob sync failed; retrying'),
    });
  }

  /** Upstream updateCronJob: a new schedule or zone is queued for its next time; other changes now. */
  private cronJobUpdated(old: KObject, cj: KObject): void {
    const o = rec(old.spec) ?? {};
    const n = rec(cj.spec) ?? {};
    if (o.schedule === n.schedule && isDeepStrictEqual(o.timeZone, n.timeZone)) return this.queue.add(keyOf(cj));
    const sched = scheduleOf(cj, this.deps().localZone);
    if ('error' in sched) {
      this.opts.recorder.event(refTo(cj), 'Warning', 'UnParseableCronJobSchedule', `unparseable schedule for cronjob: ${str(n.schedule) ?? ''}`);
      return;
    }
    this.queue.addAfter(keyOf(cj), nextScheduleTimeDuration(cj, this.opts.now().getTime(), sched));
  }

  /** Upstream cleanupFinishedJobs: finished Jobs beyond the history limits go, oldest first. */
  private async cleanupFinished(cj: KObject, status: CronStatus, jobs: readonly KObject[]): Promise<boolean> {
    const spec = rec(cj.spec) ?? {};
    let changed = false;
    for (const [type, limitField] of [
      ['Complete', 'successfulJobsHistoryLimit'],
      ['Failed', 'failedJobsHistoryLimit'],
    ] as const) {
      const limit = num(spec[limitField]);
      if (limit === undefined) continue;
      const finished = jobs.filter((j) => finishedType(j) === type).sort(byStartTime);
      for (const j of finished.slice(0, Math.max(0, finished.length - limit))) if (await deleteJob(this.deps(), cj, status, j)) changed = true;
    }
    return changed;
  }

  async sync(key: string): Promise<void> {
    const cj = this.cronJobs?.get(key);
    if (!cj) {
      this.written.delete(key);
      return;
    }
    if (Number(cj.metadata.resourceVersion) < (this.written.get(key) ?? 0)) return;
    const jobs = (this.jobs?.store.byIndex(NAMESPACE_INDEX, cj.metadata.namespace ?? '') ?? []).filter((j) => {
      const ref = controllerRefOf(j);
      return ref?.kind === 'CronJob' && ref.uid === cj.metadata.uid;
    });
    const status = readCronStatus(cj);
    const cleaned = await this.cleanupFinished(cj, status, jobs);
    let result: Awaited<ReturnType<typeof syncCronJob>> = { statusChanged: false };
    let syncError: unknown;
    try {
      result = await syncCronJob(this.deps(), cj, status, jobs);
    } catch (err) {
      syncError = err;
    }
    if (cleaned || result.statusChanged) await this.writeStatus(key, cj, status);
    if (result.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
    if (syncError !== undefined) throw syncError instanceof Error ? syncError : new Error('cronjob sync failed', { cause: syncError });
  }

  private async writeStatus(key: string, cj: KObject, status: CronStatus): Promise<void> {
    const wire: Record<string, unknown> = {};
    if (status.active.length) wire.active = status.active;
    if (status.lastScheduleTime) wire.lastScheduleTime = status.lastScheduleTime;
    if (status.lastSuccessfulTime) wire.lastSuccessfulTime = status.lastSuccessfulTime;
    const desired = { ...cj, status: wire };
    const { object } = await this.store.update(this.type('cronjobs'), cj.metadata.namespace ?? '', cj.metadata.name!, () => structuredClone(desired), { ...ctx, subresource: 'status' });
    this.written.set(key, Number(object.metadata.resourceVersion));
  }
}
