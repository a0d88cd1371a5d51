import { ApiError } from '../api/errors';
import { isObject, type KObject } from '../api/types';
import { realClock, type Clock } from '../../common/informer/clock';
import { StorageError, type Storage, type StorageEvent } from '../storage/storage';
import { WatchHistory, type CachedEvent } from './watch-history';

export type { CachedEvent } from './watch-history';

/**
 * Upstream's largest watch cache holds 100 × 1024 events (defaultUpperBoundCapacity, per
 * resource); one store-wide history here holds at most as many.
 */
export const MAX_HISTORY_EVENTS = 100 * 1024;
/** How often history is aged out when no write comes to do it. */
const TRIM_EVERY_MS = 10_000;

interface Subscriber {
  prefix: string;
  /** Revision up to which this watcher has been given (or passed over) the history. */
  cursor: number;
  /** Told about each appended event (after it is in history). */
  notify(ev: CachedEvent): void;
  /** The watcher ends: with the error, else normally (it fell behind, or the cache lost events it needed). */
  end(err?: ApiError): void;
}

export interface WatchCacheOptions {
  /** How long events stay in memory (section 8: 5 minutes). */
  retainMs: number;
  /** At most this many bytes of history in memory (--watch-cache-max-bytes; CachedEvent.size); default unbounded. */
  maxBytes?: number;
  /** At most this many events of history (default MAX_HISTORY_EVENTS). */
  maxEvents?: number;
  now: () => number;
  /** One-shot timers for ageing history out between writes (default real timers). */
  after?: Clock['after'];
  /** Told about each stored value that cannot be decoded (the event is skipped, or a delete carries a stub object). */
  onCorrupt?: (key: string, revision: number, err: CorruptObjectError) => void;
  /** Told each time a watcher is ended because it fell behind the history (upstream's apiserver_terminated_watchers_total). */
  onWatcherTerminated?: (resource: WatchedResource) => void;
  /** Also told of every store event the cache follows (ListFromCacheSnapshot's list snapshots); none when the gate is off. */
  follower?: CacheFollower;
}

/** What follows the store through the watch cache's one store watch (store/list-snapshots.ts). */
export interface CacheFollower {
  /** The cache follows the store anew (its first start, or after it missed events): what was built from earlier events is stale. */
  restart(): void;
  /** Each store event in revision order, once between restarts (undecodable ones too), before watchers are told. */
  event(ev: StorageEvent): void;
  /** The history was trimmed: it holds every event after coveredFrom and no older one. */
  trimmed(coveredFrom: number): void;
}

/** The API resource a watch prefix is under (/<group or core>/<resource>/...); group '' is core. */
export interface WatchedResource {
  group: string;
  resource: string;
}

/**
 * One watch on the whole store fanned out to every API watcher (6.1: many watchers, one store read).
 * Keeps recent events in memory (WatchHistory: retainMs, maxBytes, maxEvents) so watches resuming
 * from a recent resourceVersion replay from memory; older starts fall back to the store's own
 * history, which answers Compacted (→ 410) once that is gone too. Watchers read the shared history
 * by position and hold no events of their own; a watcher that falls so far behind that its
 * position is trimmed away is ended (normally), as upstream's cacher terminates a watcher whose
 * buffer is full, and its client resumes from the last resourceVersion it got (from the store).
 */
export class WatchCache {
  private readonly history: WatchHistory;
  private latest = 0;
  private readonly subscribers = new Set<Subscriber>();
  /** Open watches (from memory or replaying the store), per "group/resource" of their prefix. */
  private readonly watching = new Map<string, number>();
  private readonly revisionWaiters: Array<{ rev: number; resolve: () => void }> = [];
  private ready: Promise<void>;
  private markReady!: () => void;
  private following = false;

  constructor(
    private readonly storage: Storage,
    private readonly opts: WatchCacheOptions,
  ) {
    this.history = new WatchHistory({ retainMs: opts.retainMs, maxBytes: opts.maxBytes ?? Infinity, maxEvents: opts.maxEvents ?? MAX_HISTORY_EVENTS });
    this.ready = new Promise((r) => (this.markReady = () => ((this.following = true), r())));
  }

  /** Follows the store until the signal aborts; restarts from the current revision if the store watch breaks. Ages history out meanwhile. */
  async run(signal: AbortSignal): Promise<void> {
    const stopTrimming = this.trimEvery(TRIM_EVERY_MS, signal);
    try {
      await this.follow(signal);
    } finally {
      stopTrimming();
    }
  }

  /** Bytes and events of history held now, and open watches per resource (the /metrics gauges). */
  stats(): { historyBytes: number; historyEvents: number; watchers: ReadonlyMap<string, number> } {
    return { historyBytes: this.history.bytes, historyEvents: this.history.length, watchers: this.watching };
  }

  private async follow(signal: AbortSignal): Promise<void> {
    let compacted = false;
    while (!signal.aborted) {
      try {
        // The store may be unreachable (etcd down at start): keep trying; readyz reports it meanwhile.
        const start = await this.storage.currentRevision();
        if (start > this.latest) {
          // Anything between the old position and `start` was missed: older resumes must go to the store.
          this.history.reset(start);
          // Watchers following from memory would silently miss those events: end them, as
          // upstream's cacher terminates its watchers when it re-lists. With the history compacted
          // away they get 410 (a resume would get it anyway); otherwise they end normally and a
          // resume replays the gap from the store.
          const lost = this.latest;
          for (const s of [...this.subscribers]) s.end(compacted ? tooOld(lost) : undefined);
          this.subscribers.clear();
          this.latest = start;
          this.opts.follower?.restart();
        } else if (!this.following) this.opts.follower?.restart();
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

  /** Trims history every `ms` until the signal aborts (writes trim too, but without writes nothing would age out); returns a stopper. */
  private trimEvery(ms: number, signal: AbortSignal): () => void {
    const after = (delay: number, fn: () => void) => (this.opts.after ? this.opts.after(delay, fn) : realClock.after(delay, fn));
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (signal.aborted) return;
      this.trim(this.opts.now());
      cancel = after(ms, tick);
    };
    cancel = after(ms, tick);
    return () => cancel();
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
    const resource = watchedResource(prefix);
    const counted = resource ? `${resource.group}/${resource.resource}` : undefined;
    if (counted) this.watching.set(counted, (this.watching.get(counted) ?? 0) + 1);
    try {
      yield* this.replayThenFollow(prefix, fromRevision, signal);
    } finally {
      if (counted) {
        const n = (this.watching.get(counted) ?? 1) - 1;
        if (n > 0) this.watching.set(counted, n);
        else this.watching.delete(counted);
      }
    }
  }

  /**
   * The object's JSON for a watch event, rendered once per event and kept with it (its bytes count
   * against the history's bound while the history holds it).
   */
  render(ev: CachedEvent): string {
    if (ev.json === undefined) this.history.rendered(ev, JSON.stringify(ev.object));
    return ev.json!;
  }

  /**
   * A watch-stream chunk of the event in a form named by key, made by make() the first time any
   * watcher asks for that form and kept with the event (counted against the history's bound as
   * render's JSON is), so that a thousand watchers of one form encode each event once, not a
   * thousand times. key must name everything the chunk depends on besides the event.
   */
  rendering(ev: CachedEvent, key: string, make: () => string | Buffer): string | Buffer {
    const kept = ev.renderings?.get(key);
    if (kept !== undefined) return kept;
    const chunk = make();
    this.history.renderedAs(ev, key, chunk);
    return chunk;
  }

  private async *replayThenFollow(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<CachedEvent> {
    if (fromRevision < this.history.coveredFrom) {
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
          if (last >= this.history.coveredFrom) break;
        }
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Compacted') throw tooOld(fromRevision);
        throw err;
      } finally {
        inner.abort();
        signal.removeEventListener('abort', stop);
      }
      if (signal.aborted) return;
      fromRevision = Math.max(last, this.history.coveredFrom);
    }
    yield* this.fromMemory(prefix, fromRevision, signal);
  }

  /** Follows the shared history from fromRevision (which it covers) by position; see the class comment. */
  private async *fromMemory(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<CachedEvent> {
    let wake: (() => void) | undefined;
    let ended: { err?: ApiError } | undefined;
    const sub: Subscriber = {
      prefix,
      cursor: fromRevision,
      notify(ev) {
        if (!wake) return; // busy: it reads on from its cursor when done
        // Idle and not for this watcher: it has seen everything up to here.
        if (!ev.key.startsWith(prefix)) sub.cursor = ev.revision;
        else wakeUp();
      },
      end(err) {
        ended ??= { err };
        wakeUp();
      },
    };
    const wakeUp = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    this.subscribers.add(sub);
    const onAbort = wakeUp;
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        if (ended) {
          if (ended.err) throw ended.err;
          return;
        }
        if (sub.cursor < this.history.coveredFrom) return; // fell behind (trim ends it too; this is the guard)
        const { event, scanned } = this.history.next(prefix, sub.cursor);
        sub.cursor = scanned;
        if (event) {
          yield event;
          continue;
        }
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      this.subscribers.delete(sub);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private append(ev: StorageEvent): void {
    const now = this.opts.now();
    const ce = this.decode(ev, now);
    this.opts.follower?.event(ev);
    // An undecodable write is skipped, but its revision still counts: readers waiting for it go on.
    if (ce) this.history.push(ce);
    this.latest = ev.revision;
    this.trim(now);
    if (ce) for (const s of this.subscribers) s.notify(ce);
    for (let i = this.revisionWaiters.length - 1; i >= 0; i--) {
      if (this.revisionWaiters[i].rev <= this.latest) this.revisionWaiters.splice(i, 1)[0].resolve();
    }
  }

  /**
   * Ages and bounds history. A watcher behind the new start of history that had not been given
   * one of the dropped events of its prefix has fallen behind and is ended; one that only had
   * other prefixes' events ahead of it just moves on.
   */
  private trim(now: number): void {
    const dropped = this.history.trim(now);
    if (dropped.length === 0) return;
    const covered = this.history.coveredFrom;
    this.opts.follower?.trimmed(covered);
    for (const s of [...this.subscribers]) {
      if (s.cursor >= covered) continue;
      if (!dropped.some((e) => e.revision > s.cursor && e.key.startsWith(s.prefix))) {
        s.cursor = covered;
        continue;
      }
      // Forgotten at once: its generator may stay suspended (its peer stalled) until its connection ends.
      this.subscribers.delete(s);
      s.end();
      const resource = watchedResource(s.prefix);
      if (resource) this.opts.onWatcherTerminated?.(resource);
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
      return { type: 'DELETED', key: ev.key, revision: ev.revision, object, time: now, size: (ev.prevValue ?? ev.value).length };
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
      size: ev.value.length + (ev.prevValue?.length ?? 0),
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

/** The resource of a watch prefix (/<group or core>/<resource>/...), or undefined for the whole store. */
function watchedResource(prefix: string): WatchedResource | undefined {
  const [group, resource] = prefix.split('/', 3).slice(1);
  if (!group || !resource) return undefined;
  return { group: group === 'core' ? '' : group, resource };
}

export function tooOld(rev: number): ApiError {
  return new ApiError('Expired', `too old resource version: ${rev}`);
}
