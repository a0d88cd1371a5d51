import type { Logger } from 'pino';
import type { Clock } from '../../../common/informer/clock';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import { num } from '../../registry/obj-access';
import type { ResourceRegistry } from '../../registry/builtin';
import type { ResourceType } from '../../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { conditionsOf } from './job-conditions';
import { jobSpec } from './job-pods';

export interface TtlAfterFinishedOptions {
  now: () => Date;
  log: Logger;
  /** Timers of the queue (the wait until a TTL expires); default real ones. */
  clock?: Clock;
  informers?: StoreInformers;
}

const ctx = controllerContext('ttl-after-finished-controller');

/**
 * When a finished Job's TTL expires (upstream pkg/controller/ttlafterfinished): the lastTransitionTime
 * of its Complete or Failed condition plus ttlSecondsAfterFinished. Undefined when the Job has not
 * finished or has no TTL (or is being deleted).
 */
export function jobExpiresAt(job: KObject): number | undefined {
  const ttl = num(jobSpec(job).ttlSecondsAfterFinished);
  if (ttl === undefined || job.metadata.deletionTimestamp) return undefined;
  const finished = conditionsOf(job).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  const at = Date.parse(finished?.lastTransitionTime ?? '');
  return Number.isFinite(at) ? at + ttl * 1000 : undefined;
}

/**
 * Upstream's TTL-after-finished controller: a finished Job with ttlSecondsAfterFinished is deleted
 * once the TTL has passed, with foreground propagation (its pods go first, as upstream) and its
 * uid as a precondition; the TTL is checked again on a fresh read first, so one changed meanwhile
 * (or a Job recreated under the name) is not deleted early.
 */
export class TtlAfterFinishedController {
  private readonly informers: StoreInformers;
  private queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: TtlAfterFinishedOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  private jobs(): ResourceType {
    const t = this.registry.lookup('batch', 'v1', 'jobs');
    if (!t) throw new Error('jobs type not registered');
    return t;
  }

  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue({ clock: this.opts.clock });
    const informer = this.informers.informer(this.jobs());
    const enqueue = (j: KObject) => {
      if (jobExpiresAt(j) !== undefined) this.queue.add(`${j.metadata.namespace}/${j.metadata.name}`);
    };
    informer.addEventHandler({ onAdd: enqueue, onUpdate: (_o, j) => enqueue(j) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, informer))) return;
    await runWorkers(
      this.queue,
      async (key) => {
        const job = informer.get(key);
        if (job) await this.process(key, job);
      },
      signal,
      { onError: (key, err) => this.opts.log.warn({ err, job: key }, 'cleaning up a finished Job failed; retrying') },
    );
  }

  /** Deletes the Job if its TTL has expired, else comes back when it will. */
  private async process(key: string, cached: KObject): Promise<void> {
    if (!this.expired(key, cached)) return;
    const ns = cached.metadata.namespace ?? '';
    const name = cached.metadata.name!;
    let fresh: KObject;
    try {
      fresh = await this.store.get(this.jobs(), ns, name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!this.expired(key, fresh)) return;
    try {
      await this.store.delete(this.jobs(), ns, name, { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata.uid } }, ctx);
      this.opts.log.info({ job: key }, 'cleaned up a finished Job past its ttlSecondsAfterFinished');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private expired(key: string, job: KObject): boolean {
    const at = jobExpiresAt(job);
    if (at === undefined) return false;
    const left = at - this.opts.now().getTime();
    if (left <= 0) return true;
    this.queue.addAfter(key, left);
    return false;
  }
}
