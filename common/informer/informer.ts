import { realClock, sleepOn, type Clock } from './clock';
import { Indexer, type IndexerReader, type IndexFunc } from './indexer';
import { isResourceExpired, objectKey, type ListerWatcher, type MetaObject, type WatchEvent } from './list-watch';

/** What the informer logs through; a pino Logger and the agent's Log satisfy it. */
export interface InformerLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Notifications for one consumer (client-go's ResourceEventHandler). Called synchronously, in
 * order, after the cache holds the new state; they must be quick (enqueue a key, update an
 * index) and should not throw (a throw is logged and the next handler still runs).
 */
export interface EventHandler<T> {
  /** A new object, from a list or a watch; isInInitialList is true during the first list (and for the replay to a handler added later). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /**
   * A changed object; also every cached object again after a re-list (when still there) and at
   * each resync, possibly with the same resourceVersion (old === new at a resync).
   */
  onUpdate?(oldObj: T, newObj: T): void;
  /** An object gone: deleted, or missing from a re-list (its last known state). */
  onDelete?(obj: T): void;
  /**
   * When present, each list is handed over whole instead of as adds, updates and deletes: the
   * complete set, in list order (for consumers that merge full sets, as the agent's pod config
   * does for its sources, like the kubelet's PodConfig SET operations).
   */
  onReplace?(objs: T[]): void;
}

export interface HandlerOptions {
  /**
   * Removes the handler once it aborts (a control loop losing leadership): it is never called
   * again. No listener is added to the signal (loops register many handlers on one signal); the
   * registration itself is dropped at the next notification.
   */
  signal?: AbortSignal;
  /** Calls onUpdate(obj, obj) for every cached object this often (client-go's resync); default the informer's resyncPeriodMs. 0: never. */
  resyncPeriodMs?: number;
}

export interface InformerOptions<T> {
  /** Names the informer in logs (e.g. "pods", "secrets in svc-system"). */
  name: string;
  clock?: Clock;
  log?: InformerLog;
  /**
   * Each watch is ended after a random time in [minWatchTimeoutMs, 2 × minWatchTimeoutMs), as
   * client-go's reflector picks its watch timeouts (default 5 min), so watches end routinely.
   */
  minWatchTimeoutMs?: number;
  /** Default resync period of handlers (0: none, the default). */
  resyncPeriodMs?: number;
  /** Index functions besides the built-in namespace index. */
  indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** Applied to every object before it is cached or handed out (client-go's TransformFunc), e.g. to keep metadata only. */
  transform?: (obj: T) => T;
  /** Back-off after a failed list or watch: initial, doubling to max (client-go's reflector: 800 ms to 30 s). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Randomness in [0, 1) for the watch timeout; injectable for tests. */
  random?: () => number;
  /**
   * client-go's reflector behaviour instead of re-listing after every end: a watch that ends
   * cleanly (a timeout) or fails (not 410) is resumed from the last resourceVersion, after the
   * back-off for a failure; only 410 or a failed list lists again. Default false.
   */
  resumeAfterCleanEnd?: boolean;
}

/** client-go's defaultMinWatchTimeout. */
export const DEFAULT_MIN_WATCH_TIMEOUT_MS = 5 * 60_000;
/** A source that ends a watch sooner than this with no events is treated as failing (client-go's "very short watch"). */
const SHORT_WATCH_MS = 1000;

interface Registration<T> {
  handler: EventHandler<T>;
  resyncMs: number;
  signal?: AbortSignal;
  cancelResync?: () => void;
}

/**
 * One collection followed into an indexed cache, with handlers notified of every change: client-go's
 * SharedIndexInformer (reflector, store and processor in one). It lists, then watches from the
 * list's resourceVersion; when the watch ends for any reason (its timeout, the source ending it,
 * 410 Gone, an error) it lists again and tells the handlers what changed meanwhile (adds, updates,
 * and deletes for objects no longer listed). Upstream's reflector resumes a cleanly ended watch from
 * the last resourceVersion and lists only after 410 or errors; by default every end re-lists here
 * (issue 15's contract for svc-apiserver's loops), trading one list per watch lifetime for never
 * depending on a resume being gap-free. resumeAfterCleanEnd gives upstream's behaviour (the
 * agent's pod source keeps it). Failed lists and watches are retried with back-off; 410 re-lists at once.
 */
export class Informer<T extends MetaObject> {
  private readonly indexer: Indexer<T>;
  private readonly clock: Clock;
  private readonly registrations = new Set<Registration<T>>();
  private synced = false;
  private running = false;
  private rv = '';
  private readonly syncWaiters = new Set<() => void>();

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly o: InformerOptions<T>,
  ) {
    this.indexer = new Indexer<T>(o.indexers);
    this.clock = o.clock ?? realClock;
  }

  /** The cache: read it in workers (client-go's GetIndexer / lister). */
  get store(): IndexerReader<T> {
    return this.indexer;
  }

  /** Shorthand for store.get: the cached object under "namespace/name" (or "name"). */
  get(key: string): T | undefined {
    return this.indexer.get(key);
  }

  /** Whether the cache has an index of that name (several loops may want the same one; add it once). */
  hasIndexer(name: string): boolean {
    return this.indexer.hasIndexer(name);
  }

  /** Adds index functions (before or after start; existing objects are indexed at once). */
  addIndexers(indexers: Readonly<Record<string, IndexFunc<T>>>): void {
    this.indexer.addIndexers(indexers);
  }

  /**
   * Registers a handler. Objects already cached are replayed to it as adds (isInInitialList true),
   * as client-go does for a handler added to a running informer. Returns a function that removes it.
   */
  addEventHandler(handler: EventHandler<T>, opts: HandlerOptions = {}): () => void {
    const reg: Registration<T> = { handler, resyncMs: opts.resyncPeriodMs ?? this.o.resyncPeriodMs ?? 0, signal: opts.signal };
    const remove = () => {
      reg.cancelResync?.();
      this.registrations.delete(reg);
    };
    if (opts.signal?.aborted) return remove;
    this.registrations.add(reg);
    if (handler.onReplace && this.synced) this.call(reg, 'onReplace', () => handler.onReplace!(this.indexer.list()));
    else if (!handler.onReplace) for (const obj of this.indexer.list()) this.call(reg, 'onAdd', () => handler.onAdd?.(obj, true));
    if (this.running) this.scheduleResync(reg);
    return remove;
  }

  /** True once the first list has been delivered to the cache and the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves true once synced, or false as soon as the signal aborts first. */
  whenSynced(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        this.syncWaiters.delete(onSync);
        signal?.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onSync = () => done(true);
      const onAbort = () => done(false);
      this.syncWaiters.add(onSync);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The resourceVersion of the last list or event applied ('' before the first list). */
  lastSyncResourceVersion(): string {
    return this.rv;
  }

  /** Lists and watches until the signal aborts; never rejects. Runs once: a second call throws. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer ${this.o.name} is already running`);
    this.running = true;
    for (const reg of this.registrations) this.scheduleResync(reg);
    const initial = this.o.backoffInitialMs ?? 800;
    const resume = this.o.resumeAfterCleanEnd ?? false;
    const name = this.o.name;
    let delay = initial;
    let expiredInARow = 0;
    let needList = true;
    try {
      while (!signal.aborted) {
        try {
          if (needList) {
            const list = await this.lw.list(signal);
            if (signal.aborted) break;
            this.replace(list.items, list.resourceVersion);
            needList = false;
          }
          const end = await this.watchOnce(signal);
          if (signal.aborted) break;
          if (end.suspicious) throw new Error(`very short watch: ended after ${end.ms} ms with no events`);
          delay = initial;
          expiredInARow = 0;
          needList = !resume;
          const reason = end.timedOut ? 'timeout' : 'ended by the source';
          this.o.log?.debug({ informer: name, reason, events: end.events, durationMs: end.ms }, `${name} watch ended; ${resume ? 'watching again' : 'listing again'}`);
        } catch (err) {
          if (signal.aborted) break;
          if (isResourceExpired(err)) {
            needList = true;
            // 410 lists again at once, as client-go; a source that keeps answering 410 right after a list backs off.
            if (expiredInARow++ === 0) {
              this.o.log?.info({ informer: name, resourceVersion: this.rv, err: (err as Error).message }, `${name} watch expired (410); listing again`);
              continue;
            }
          } else if (!resume) needList = true;
          this.o.log?.warn({ informer: name, err, retryInMs: delay }, `${name} list/watch failed; retrying`);
          await sleepOn(this.clock, delay, signal);
          delay = Math.min(delay * 2, this.o.backoffMaxMs ?? 30_000);
        }
      }
    } finally {
      this.running = false;
      for (const reg of this.registrations) reg.cancelResync?.();
    }
  }

  /** One watch from the last resourceVersion until it ends; applies its events. */
  private async watchOnce(signal: AbortSignal): Promise<{ timedOut: boolean; events: number; ms: number; suspicious: boolean }> {
    const min = this.o.minWatchTimeoutMs ?? DEFAULT_MIN_WATCH_TIMEOUT_MS;
    const timeoutMs = Math.floor(min * (1 + (this.o.random ?? Math.random)()));
    const ac = new AbortController();
    const stop = () => ac.abort();
    signal.addEventListener('abort', stop, { once: true });
    let timedOut = false;
    const cancel = this.clock.after(timeoutMs, () => {
      timedOut = true;
      ac.abort();
    });
    const started = this.clock.now();
    let events = 0;
    try {
      for await (const ev of this.lw.watch(this.rv, ac.signal, { timeoutMs })) {
        if (ac.signal.aborted) break;
        events++;
        this.apply(ev);
      }
    } catch (err) {
      // A source may reject when its signal aborts; ending it ourselves is a clean end.
      if (!ac.signal.aborted) throw err;
    } finally {
      cancel();
      signal.removeEventListener('abort', stop);
    }
    const ms = this.clock.now() - started;
    return { timedOut, events, ms, suspicious: !timedOut && !signal.aborted && events === 0 && ms < SHORT_WATCH_MS };
  }

  private apply(ev: WatchEvent<T>): void {
    const rv = ev.object.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.rv = rv;
      return;
    }
    const obj = this.o.transform ? this.o.transform(ev.object) : ev.object;
    if (ev.type === 'DELETED') {
      const old = this.indexer.delete(objectKey(obj));
      // A delete of an object never cached (filtered out, or already gone at the list) tells nobody anything.
      if (old) this.notify('onDelete', (h) => h.onDelete?.(obj));
    } else {
      const old = this.indexer.set(obj);
      if (old) this.notify('onUpdate', (h) => h.onUpdate?.(old, obj));
      else this.notify('onAdd', (h) => h.onAdd?.(obj, false));
    }
    if (rv) this.rv = rv;
  }

  /** A list's outcome: the cache becomes exactly the list; handlers hear the differences (or the whole list). */
  private replace(items: readonly T[], resourceVersion: string): void {
    const initial = !this.synced;
    const fresh = new Map<string, T>();
    for (const item of items) {
      const obj = this.o.transform ? this.o.transform(item) : item;
      fresh.set(objectKey(obj), obj);
    }
    const changes: Array<{ old?: T; obj: T }> = [];
    for (const obj of fresh.values()) changes.push({ old: this.indexer.set(obj), obj });
    const gone: T[] = [];
    for (const key of this.indexer.listKeys()) if (!fresh.has(key)) gone.push(this.indexer.delete(key)!);
    this.rv = resourceVersion;
    const all = [...fresh.values()];
    for (const reg of [...this.registrations]) {
      const h = reg.handler;
      if (h.onReplace) {
        this.call(reg, 'onReplace', () => h.onReplace!(all));
        continue;
      }
      for (const { old, obj } of changes) {
        if (old) this.call(reg, 'onUpdate', () => h.onUpdate?.(old, obj));
        else this.call(reg, 'onAdd', () => h.onAdd?.(obj, initial));
      }
      for (const old of gone) this.call(reg, 'onDelete', () => h.onDelete?.(old));
    }
    if (initial) {
      this.synced = true;
      for (const w of [...this.syncWaiters]) w();
    }
  }

  private notify(what: keyof EventHandler<T>, fn: (h: EventHandler<T>) => void): void {
    for (const reg of [...this.registrations]) this.call(reg, what, () => fn(reg.handler));
  }

  private call(reg: Registration<T>, what: string, fn: () => void): void {
    if (!this.registrations.has(reg)) return;
    if (reg.signal?.aborted) {
      reg.cancelResync?.();
      this.registrations.delete(reg);
      return;
    }
    try {
      fn();
    } catch (err) {
      this.o.log?.warn({ informer: this.o.name, err, handler: what }, `${this.o.name} event handler threw`);
    }
  }

  private scheduleResync(reg: Registration<T>): void {
    if (reg.resyncMs <= 0) return;
    reg.cancelResync?.();
    reg.cancelResync = this.clock.after(reg.resyncMs, () => {
      if (!this.running || !this.registrations.has(reg)) return;
      if (this.synced) for (const obj of this.indexer.list()) this.call(reg, 'onUpdate', () => reg.handler.onUpdate?.(obj, obj));
      this.scheduleResync(reg);
    });
  }
}
