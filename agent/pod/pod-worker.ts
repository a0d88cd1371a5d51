/**
 * One pod's worker, as upstream's podWorkers: every change of the pod, runtime event, probe
 * result and timer ends in `kick()`, and the worker's single loop runs one sync at a time, so a
 * pod is never synced concurrently and a burst of events costs one sync. A live pod is synced
 * until it is deleted (deletionTimestamp) or removed from its source; then it is terminated with
 * the grace period, cleaned up, its final status written and, for API pods, the API object
 * deleted. Failures are retried with a capped back-off; every runtime call has a deadline, so the
 * loop cannot hang.
 */
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { Pod } from '../api/core-v1';
import { podDesc, type PodSyncer, type PodSyncState } from './pod-sync';
import { canonicalJson } from './runtime-labels';
import type { StatusManager } from './status-manager';

export interface PodWorkerDeps {
  syncer: PodSyncer;
  status: StatusManager;
  clock: Clock;
  log: Log;
  /** Sync again after this long without events (the kubelet's resync, syncFrequency). */
  resyncMs: number;
  /** Called once the pod is terminated and cleaned up; the worker's loop has ended. */
  onFinished: (uid: string) => void;
}

const MAX_ERROR_BACKOFF_MS = 30_000;

/** The parts of a pod a change of which needs a sync (upstream checkAndUpdatePod). */
function actionable(p: Pod): string {
  const m = p.metadata;
  return canonicalJson({
    spec: p.spec,
    labels: m.labels,
    annotations: m.annotations,
    deletionTimestamp: m.deletionTimestamp,
    deletionGracePeriodSeconds: m.deletionGracePeriodSeconds,
  });
}

export type WorkerPhase = 'syncing' | 'terminating' | 'finished';

export class PodWorker {
  private pod: Pod;
  private removed = false;
  private pending = true;
  private wakeCtl: AbortController | undefined;
  private readonly state: PodSyncState;
  private current: WorkerPhase = 'syncing';

  constructor(
    private readonly d: PodWorkerDeps,
    pod: Pod,
    /** API pods are deleted from the API when done; static pods are not. */
    private readonly fromApi: boolean,
  ) {
    this.pod = pod;
    this.state = { startTime: d.clock.now(), waiting: new Map() };
    if (pod.status) {
      this.state.lastStatus = pod.status;
      // Keep the start time across agent restarts (upstream keeps status.startTime once set).
      const started = pod.status.startTime ? Date.parse(pod.status.startTime) : NaN;
      if (Number.isFinite(started)) this.state.startTime = started;
    }
  }

  get uid(): string {
    return this.pod.metadata.uid ?? '';
  }

  get phase(): WorkerPhase {
    return this.current;
  }

  /** The pod as last given. */
  get spec(): Pod {
    return this.pod;
  }

  /**
   * Takes a newer version of the pod. It syncs soon only when what the node acts on changed (spec,
   * labels, annotations, deletion): as upstream's config source, a write of the pod's own status
   * coming back as an update is no reason to sync. Never blocks.
   */
  update(pod: Pod): void {
    const changed = actionable(pod) !== actionable(this.pod);
    this.pod = pod;
    if (changed) this.kick();
  }

  /** The pod left its source: terminate it. Never blocks. */
  remove(): void {
    this.removed = true;
    this.kick();
  }

  /** Asks for a sync as soon as the current one (if any) ends. Never blocks. */
  kick(): void {
    this.pending = true;
    this.wakeCtl?.abort();
  }

  /** The worker's loop; resolves when the pod is finished or the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let delay = 0;
    let errorDelay = 1000;
    while (!signal.aborted) {
      if (!this.pending) await this.sleep(delay, signal);
      if (signal.aborted) return;
      this.pending = false;
      const pod = this.pod;
      const terminating = this.removed || pod.metadata.deletionTimestamp !== undefined;
      try {
        if (!terminating) {
          const started = this.d.clock.now();
          const r = await this.d.syncer.sync(pod, this.state, signal);
          this.d.status.set(pod, r.status);
          // requeueMs counts from the start of the sync (back-offs end at fixed times).
          delay = Math.max(0, Math.min(r.requeueMs ?? this.d.resyncMs, this.d.resyncMs) - (this.d.clock.now() - started));
        } else {
          this.current = 'terminating';
          await this.terminate(pod, signal);
          this.current = 'finished';
          this.d.onFinished(this.uid);
          return;
        }
        errorDelay = 1000;
      } catch (e) {
        if (signal.aborted) return;
        this.d.log.warn({ pod: podDesc(pod), error: (e as Error).message }, terminating ? 'terminating pod failed; retrying' : 'pod sync failed; retrying');
        delay = errorDelay;
        errorDelay = Math.min(errorDelay * 2, MAX_ERROR_BACKOFF_MS);
      }
    }
  }

  private async terminate(pod: Pod, signal: AbortSignal): Promise<void> {
    this.d.log.info({ pod: podDesc(pod), removed: this.removed, graceSeconds: pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds }, 'terminating pod');
    const final = await this.d.syncer.terminate(pod, this.state, undefined, signal);
    await this.d.syncer.cleanup(this.uid, signal);
    if (this.removed) {
      // Gone from its source: an API pod that was force-deleted has no object left to write to, and
      // a static pod's mirror goes with it.
      this.d.status.forget(this.uid);
    } else {
      await this.d.status.finish(pod, final, this.fromApi, signal);
    }
    this.d.log.info({ pod: podDesc(pod), phase: final.phase }, 'pod terminated and cleaned up');
  }

  private async sleep(ms: number, signal: AbortSignal): Promise<void> {
    const ac = new AbortController();
    this.wakeCtl = ac;
    if (!this.pending) await this.d.clock.sleep(ms, AbortSignal.any([signal, ac.signal]));
    this.wakeCtl = undefined;
  }
}
