import { ApiError } from '../api/errors';
import { isObject, type KObject } from '../api/types';
import { StorageError, type Storage, type StorageEvent } from '../storage/storage';

export interface CachedEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  revision: number;
  object: KObject;
  prevObject?: KObject;
  /** Receipt time, for the 5-minute history window. */
  time: number;
  /** The object's JSON, rendered once and shared by every watcher that sends it unchanged. */
  json?: string;
}

interface Subscriber {
  prefix: string;
  push(ev: CachedEvent): void;
  /** The cache lost events this watcher needed: it ends (with the error, else normally). */
  end(err?: ApiError): void;
}

export interface WatchCacheOptions {
  /** How long events stay in memory (section 8: 5 minutes). */
  retainMs: number;
  now: () => number;
  /** Told about each stored value that cannot be decoded (the event is skipped, or a delete carries a stub object). */
  onCorrupt?: (key: string, revision: number, err: CorruptObjectError) => void;
}

/**
 * One watch on the whole store fanned out to every API watcher (6.1: many watchers, one store read).
 * Keeps the last retainMs of events in memory so watches resuming from a recent resourceVersion
 * replay from memory; older starts fall back to the store's own history, which answers Compacted
 * (→ 410) once that is gone too.
 */
export class WatchCache {
  private readonly events: CachedEvent[] = [];
  /** Every event with revision > coveredFrom is in `events`. */
  private coveredFrom = 0;
  private latest = 0;
  private readonly subscribers = new Set<Subscriber>();
  private readonly revisionWaiters: Array<{ rev: number; resolve: () => void }> = [];
  private ready: Promise<void>;
  private markReady!: () => void;
  private following = false;

  constructor(
    private readonly storage: Storage,
    private readonly opts: WatchCacheOptions,
  ) {
    this.ready = new Promise((r) => (this.markReady = () => ((this.following = true), r())));
  }

  /** Follows the store until the signal aborts; restarts from the current revision if the store watch breaks. */
  async run(signal: AbortSignal): Promise<void> {
    let compacted = false;
    while (!signal.aborted) {
      try {
        // The store may be unreachable (etcd down at start): keep trying; readyz reports it meanwhile.
        const start = await this.storage.currentRevision();
        if (start > this.latest) {
          // Anything between the old position and `start` was missed: older resumes must go to the store.
          this.events.length = 0;
          this.coveredFrom = start;
          // Watchers following from memory would silently miss those events: end them, as
          // upstream's cacher terminates its watchers when it re-lists. With the history compacted
          // away they get 410 (a resume would get it anyway); otherwise they end normally and a
          // resume replays the gap from the store.
          const lost = this.latest;
          for (const s of [...this.subscribers]) s.end(compacted ? tooOld(lost) : undefined);
          this.latest = start;
        }
        this.markReady();
        compacted = false;
        for await (const ev of this.storage.watch('/', this.latest, signal)) this.append(ev);
      } catch (err) {
        if (signal.aborted) break;
        if (!(err instanceof StorageError)) throw err;
        // Sticky until the reset it calls for: a failed restart attempt in between must not clear it.
        if (err.code === 'Compacted') compacted = true;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** True once the cache has followed the store at least once (readyz informer-sync). */
  isReady(): boolean {
    return this.following;
  }

  /** Resolves once the cache follows the store. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  currentRevision(): number {
    return this.latest;
  }

  /** Resolves when the cache has seen the revision, or rejects with 504 "Too large resource version" after timeoutMs. */
  async waitForRevision(rev: number, timeoutMs: number): Promise<void> {
    if (rev <= this.latest) return;
    await new Promise<void>((resolve, reject) => {
      const w = { rev, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        const i = this.revisionWaiters.indexOf(w);
        if (i >= 0) this.revisionWaiters.splice(i, 1);
        reject(
          new ApiError('Timeout', `Too large resource version: ${rev}, current: ${this.latest}`, { retryAfterSeconds: 1 }),
        );
      }, timeoutMs);
      this.revisionWaiters.push(w);
    });
  }

  /**
   * Events under prefix with revision > fromRevision, in order, until the signal aborts.
   * Throws 410 Gone (as an ApiError) when that history no longer exists.
   */
  async *watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<CachedEvent> {
    if (fromRevision < this.coveredFrom) {
      // Older than memory: replay the store's history, then continue from memory without a gap.
      let last = fromRevision;
      const inner = new AbortController();
      const stop = () => inner.abort();
      signal.addEventListener('abort', stop, { once: true });
      try {
        for await (const ev of this.storage.watch(prefix, fromRevision, inner.signal)) {
          const ce = this.decode(ev, this.opts.now());
          if (ce) yield ce;
          last = ev.revision;
          if (last >= this.coveredFrom) break;
        }
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Compacted') throw tooOld(fromRevision);
        throw err;
      } finally {
        inner.abort();
        signal.removeEventListener('abort', stop);
      }
      if (signal.aborted) return;
      fromRevision = Math.max(last, this.coveredFrom);
    }
    yield* this.fromMemory(prefix, fromRevision, signal);
  }

  private async *fromMemory(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<CachedEvent> {
    const queue: CachedEvent[] = [];
    let wake: (() => void) | undefined;
    let ended: { err?: ApiError } | undefined;
    const sub: Subscriber = {
      prefix,
      push(ev) {
        if (ended) return; // after the gap: not for this watcher
        queue.push(ev);
        wake?.();
      },
      end(err) {
        ended = { err };
        wake?.();
      },
    };
    // Subscribe first, then copy history, so no event falls between the two.
    this.subscribers.add(sub);
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const history = this.events.filter((e) => e.revision > fromRevision && e.key.startsWith(prefix));
      let last = fromRevision;
      for (const e of history) {
        last = e.revision;
        yield e;
      }
      while (!signal.aborted) {
        while (queue.length > 0) {
          const e = queue.shift()!;
          if (e.revision <= last) continue;
          last = e.revision;
          yield e;
          if (signal.aborted) return;
        }
        if (ended) {
          if (ended.err) throw ended.err;
          return;
        }
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      this.subscribers.delete(sub);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private append(ev: StorageEvent): void {
    const now = this.opts.now();
    const ce = this.decode(ev, now);
    // An undecodable write is skipped, but its revision still counts: readers waiting for it go on.
    if (ce) this.events.push(ce);
    this.latest = ev.revision;
    this.trim(now);
    if (ce) for (const s of this.subscribers) if (ce.key.startsWith(s.prefix)) s.push(ce);
    for (let i = this.revisionWaiters.length - 1; i >= 0; i--) {
      if (this.revisionWaiters[i].rev <= this.latest) this.revisionWaiters.splice(i, 1)[0].resolve();
    }
  }

  private trim(now: number): void {
    let n = 0;
    while (n < this.events.length && now - this.events[n].time > this.opts.retainMs) n++;
    if (n > 0) {
      this.coveredFrom = this.events[n - 1].revision;
      this.events.splice(0, n);
    }
  }

  /**
   * The watch event for a store event, or null for a value that cannot be decoded (reported via
   * onCorrupt): one corrupt object written by another tool must not stop the cache, which every
   * watch and every resourceVersion wait of this replica depends on. The deletion of a corrupt
   * object (spec 2.5 unsafe deletion) is still delivered, with a stub object naming it.
   */
  private decode(ev: StorageEvent, now: number): CachedEvent | null {
    const safe = (value: Buffer): KObject | undefined => {
      try {
        return decodeObject(value, ev.revision);
      } catch (err) {
        if (!(err instanceof CorruptObjectError)) throw err;
        this.opts.onCorrupt?.(ev.key, ev.revision, err);
        return undefined;
      }
    };
    if (ev.type === 'delete') {
      const object = safe(ev.prevValue ?? ev.value) ?? stubObject(ev.key, ev.revision);
      return { type: 'DELETED', key: ev.key, revision: ev.revision, object, time: now };
    }
    const object = safe(ev.value);
    if (!object) return null;
    const created = ev.createRevision === ev.revision;
    return {
      type: created ? 'ADDED' : 'MODIFIED',
      key: ev.key,
      revision: ev.revision,
      object,
      prevObject: ev.prevValue ? safe(ev.prevValue) : undefined,
      time: now,
    };
  }
}

/** A stored value that is not a serialized object (truncated, foreign, or not JSON). */
export class CorruptObjectError extends Error {}

/** Names an object only by its key (/<group>/<resource>/[<namespace>/]<name>), for the deletion of a corrupt one. */
function stubObject(key: string, revision: number): KObject {
  const parts = key.split('/').filter(Boolean);
  const metadata: KObject['metadata'] = { name: parts[parts.length - 1], resourceVersion: String(revision) };
  if (parts.length === 4) metadata.namespace = parts[2];
  return { metadata };
}

/** Stored bytes → object with its resourceVersion (the write's revision). */
export function decodeObject(value: Buffer, revision: number): KObject {
  let obj: unknown;
  try {
    obj = JSON.parse(value.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(`not JSON (${(err as Error).message})`);
  }
  if (!isObject(obj) || !isObject(obj.metadata)) throw new CorruptObjectError('not an object with metadata');
  const o = obj as unknown as KObject;
  o.metadata.resourceVersion = String(revision);
  return o;
}

export function tooOld(rev: number): ApiError {
  return new ApiError('Expired', `too old resource version: ${rev}`);
}
