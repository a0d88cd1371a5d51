/**
 * Writes pod status to the API server when it changes, as upstream's kubelet status manager: the
 * latest status of each pod is kept, and a loop sends the ones that differ from what the API
 * holds as a merge patch of pods/status. The patch carries metadata.uid, which the server refuses
 * to change, so a status never lands on a different pod that reuses the name. Static pods write
 * to their mirror pod. Failed writes are retried; a pod that is gone (404, or a uid mismatch) is
 * dropped. When a deleted pod has stopped, finish() writes its final status and then deletes the
 * API object (upstream: the status manager deletes a pod once it is terminated and cleaned up).
 */
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { podsResource } from './config-objects';
import type { Pod, PodStatus } from '../api/core-v1';

/** The API object a pod's status goes to. */
export interface ApiPodRef {
  namespace: string;
  name: string;
  uid: string;
}

/** Deletes a pod's API object once the node is done with it. */
export interface PodDeleter {
  /**
   * Deletes the pod if its uid is still `uid`, with no further grace period (upstream: DELETE with
   * gracePeriodSeconds=0 and a uid precondition). Resolves when it is gone or belongs to another
   * uid; rejects ClientError on other failures.
   */
  deletePod(ref: ApiPodRef, signal?: AbortSignal): Promise<void>;
}

/**
 * PodDeleter over the agent's ApiClient, whose delete cannot send DeleteOptions yet: it checks the
 * uid with a GET and then DELETEs. The server deletes at once because the pod's final status has
 * a terminal phase (the pod strategy gives Succeeded and Failed pods no grace period).
 */
export class ApiPodDeleter implements PodDeleter {
  constructor(
    private readonly client: ApiClient,
    private readonly timeoutMs = 10_000,
  ) {}

  async deletePod(ref: ApiPodRef, signal?: AbortSignal): Promise<void> {
    const opts = { namespace: ref.namespace, timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) };
    try {
      const cur = await this.client.get(podsResource, ref.name, opts);
      if (cur.metadata.uid !== ref.uid) return;
      await this.client.delete(podsResource, ref.name, opts);
    } catch (e) {
      if (e instanceof ClientError && e.status === 404) return;
      throw e;
    }
  }
}

export interface StatusManagerOptions {
  client: ApiClient;
  deleter: PodDeleter;
  clock: Clock;
  log: Log;
  /** Where a pod's status goes (the mirror pod for static pods); undefined when there is no API object (yet). */
  apiPod: (pod: Pod) => ApiPodRef | undefined;
  /** Delay between write rounds when there is nothing new (default 1 s), and after a failure. */
  retryMs?: number;
  requestTimeoutMs?: number;
  /** Status writes in flight at once (default 8). */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 8;

interface Entry {
  pod: Pod;
  status: PodStatus;
  /** What the API holds, as far as we know. */
  written?: PodStatus;
  /** When the status last became different from the API's (ms, performance clock), for the debug log. */
  dirtySince?: number;
}

/** Status without the fields the server or time alone change, for "did it change" comparisons. */
function comparable(s: PodStatus | undefined): unknown {
  if (!s) return undefined;
  return JSON.parse(JSON.stringify({ ...s, conditions: (s.conditions ?? []).map((c) => ({ ...c, lastProbeTime: null })) }));
}

export class StatusManager {
  private readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  /** Pods a writer is writing right now (a pod is written by one writer at a time). */
  private readonly writing = new Set<string>();
  private readonly wakers = new Set<() => void>();

  constructor(private readonly o: StatusManagerOptions) {}

  /**
   * Takes a newer copy of the pod from its source (for the API reference). The API's status is
   * read only when a pod is first seen: comparing later copies, which the server may have
   * normalised, with our own form would rewrite the same status for ever.
   */
  observe(pod: Pod): void {
    const e = this.entries.get(pod.metadata.uid ?? '');
    if (e) e.pod = pod;
  }

  /** Notes the pod's latest status; it is written soon if it differs from the API's. Never blocks. */
  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid ?? '';
    const e = this.entries.get(uid);
    if (e) {
      e.pod = pod;
      e.status = status;
    } else {
      const entry: Entry = { pod, status };
      if (pod.status) entry.written = pod.status;
      this.entries.set(uid, entry);
    }
    const cur = this.entries.get(uid)!;
    if (!isDeepStrictEqual(comparable(cur.written), comparable(status))) {
      cur.dirtySince ??= performance.now();
      this.mark(uid);
    }
  }

  /** The latest status the agent computed for a pod. */
  get(uid: string): PodStatus | undefined {
    return this.entries.get(uid)?.status;
  }

  /** Stops tracking a pod. */
  forget(uid: string): void {
    this.entries.delete(uid);
    this.dirty.delete(uid);
  }

  /**
   * Writes the final status and, when `remove` is set, deletes the API object. Retries until done
   * or the signal aborts; resolves either way (a pod that is gone needs nothing more).
   */
  async finish(pod: Pod, status: PodStatus, remove: boolean, signal: AbortSignal): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    this.set(pod, status);
    for (let delay = 200; !signal.aborted; delay = Math.min(delay * 2, this.o.retryMs ?? 5000)) {
      try {
        const res = await this.write(uid, signal);
        if (res === 'later') throw new Error('no API object to write the status to yet');
        if (remove && res !== 'gone') {
          const ref = this.o.apiPod(pod);
          if (ref) await this.o.deleter.deletePod(ref, signal);
        }
        this.forget(uid);
        return;
      } catch (e) {
        if (signal.aborted) return;
        this.o.log.warn({ pod: uid, error: (e as Error).message }, 'cannot finish pod in the API yet; retrying');
      }
      if (!(await this.o.clock.sleep(delay, signal))) return;
    }
  }

  /**
   * Writes dirty statuses until the signal aborts, with up to `concurrency` writes in flight and
   * never two for the same pod. Upstream's status manager writes one pod at a time under the
   * client's QPS limit; writing one at a time here made the API round trip the ceiling of how
   * many pods a node can report Running per second (about 20/s on a busy machine), so we overlap
   * them. Never rejects.
   */
  async run(signal: AbortSignal): Promise<void> {
    const n = Math.max(1, this.o.concurrency ?? DEFAULT_CONCURRENCY);
    await Promise.all(Array.from({ length: n }, () => this.writer(signal)));
  }

  private async writer(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const uid = this.take();
      if (uid === undefined) {
        await this.waitForWork(signal);
        continue;
      }
      this.writing.add(uid);
      let retry: boolean;
      try {
        retry = (await this.write(uid, signal)) === 'later';
      } catch (e) {
        if (signal.aborted) return;
        retry = true;
        this.o.log.warn({ pod: uid, error: (e as Error).message }, 'cannot write pod status; will retry');
      } finally {
        this.writing.delete(uid);
      }
      if (retry) {
        await this.o.clock.sleep(this.o.retryMs ?? 1000, signal);
        if (this.entries.has(uid)) this.mark(uid);
      }
    }
  }

  /** The next dirty pod no writer is writing, removed from the dirty set. */
  private take(): string | undefined {
    for (const uid of this.dirty) {
      if (this.writing.has(uid)) continue;
      this.dirty.delete(uid);
      return uid;
    }
    return undefined;
  }

  private mark(uid: string): void {
    this.dirty.add(uid);
    for (const w of [...this.wakers]) w();
  }

  /** Sleeps until a status is marked dirty (or a minute passes, or the signal aborts). */
  private async waitForWork(signal: AbortSignal): Promise<void> {
    const ac = new AbortController();
    const wake = () => ac.abort();
    this.wakers.add(wake);
    await this.o.clock.sleep(60_000, AbortSignal.any([signal, ac.signal]));
    this.wakers.delete(wake);
  }

  /**
   * Sends one pod's status if it differs. Resolves 'gone' when the API object is gone (or is
   * another pod), 'later' when there is no API object to write to yet (a static pod before its
   * mirror pod exists), 'done' otherwise. Rejects ClientError to retry.
   */
  private async write(uid: string, signal?: AbortSignal): Promise<'done' | 'gone' | 'later'> {
    const e = this.entries.get(uid);
    if (!e) return 'done';
    const ref = this.o.apiPod(e.pod);
    if (!ref) return 'later';
    if (isDeepStrictEqual(comparable(e.written), comparable(e.status))) return 'done';
    const status = e.status;
    try {
      await this.o.client.patch<Pod>(podsResource, ref.name, 'merge', { metadata: { uid: ref.uid }, status }, {
        namespace: ref.namespace,
        subresource: 'status',
        timeoutMs: this.o.requestTimeoutMs ?? 10_000,
        ...(signal ? { signal } : {}),
      });
      // Remember what we sent rather than what came back: the server may normalise fields, and
      // comparing against our own form keeps an unchanged status from being rewritten.
      e.written = status;
      if (e.dirtySince !== undefined) {
        this.o.log.debug({ pod: uid, phase: status.phase, ms: Math.round(performance.now() - e.dirtySince) }, 'pod status written (ms since it changed)');
        e.dirtySince = undefined;
      }
      return 'done';
    } catch (err) {
      if (err instanceof ClientError && (err.status === 404 || err.status === 422 || err.status === 409)) {
        if (err.status !== 404) this.o.log.info({ pod: uid, error: err.message }, 'pod status not written: the API object belongs to another pod');
        e.written = status;
        return 'gone';
      }
      throw err;
    }
  }
}
