import { realClock, type Clock } from './clock';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter';

/**
 * client-go's rate-limiting work queue (workqueue.TypedRateLimitingInterface) for string keys:
 *
 * - De-duplicating: a key added several times before a worker takes it is processed once.
 * - Never concurrent per key: a key taken by a worker is "processing" until done(key); adding it
 *   meanwhile marks it dirty, and done() puts it back, so it is processed again after, not beside.
 * - Delayed adds (addAfter; the earliest of several pending delays wins) and rate-limited adds
 *   (addRateLimited: the rate limiter's delay, by default per key 5 ms doubling to 1000 s and
 *   overall 10 qps burst 100); forget(key) resets the key's back-off after a success.
 * - shutDown(): adds are ignored from then on and get() answers undefined. Unlike client-go, whose
 *   get() still hands out the keys queued before the shutdown, queued keys are dropped: a loop
 *   stops because it lost leadership or the process is stopping, and must not write after that.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  /** Keys waiting for a delayed add: when they become ready, and the timer's cancel. */
  private readonly waiting = new Map<string, { at: number; cancel: () => void }>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;

  constructor(o: { clock?: Clock; rateLimiter?: RateLimiter } = {}) {
    this.clock = o.clock ?? realClock;
    this.limiter = o.rateLimiter ?? defaultControllerRateLimiter(this.clock);
  }

  /** Queues the key unless it is already waiting to be processed. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const getter = this.getters.shift();
    if (getter) this.take(key, getter);
    else this.queue.push(key);
  }

  /** Adds the key after ms (at once for ms ≤ 0). A key already waiting keeps the earlier of the two times. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const w = this.waiting.get(key);
    if (w && w.at <= at) return;
    w?.cancel();
    const cancel = this.clock.after(ms, () => {
      this.waiting.delete(key);
      this.add(key);
    });
    this.waiting.set(key, { at, cancel });
  }

  /** Adds the key after the rate limiter's delay for it (one more failure counted). */
  addRateLimited(key: string): void {
    this.addAfter(key, this.limiter.when(key));
  }

  /** Forgets the key's failures: its next addRateLimited starts from the base delay. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** Failures counted for the key since it was last forgotten. */
  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** The next key, marked processing until done(key), waiting for one; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.markProcessing(key));
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends the processing of a key; one added meanwhile is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.shuttingDown || !this.dirty.has(key)) return;
    const getter = this.getters.shift();
    if (getter) this.take(key, getter);
    else this.queue.push(key);
  }

  /** Stops the queue: queued keys and pending delayed adds are dropped, waiting get() calls answer undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    this.queue.length = 0;
    this.dirty.clear();
    for (const w of this.waiting.values()) w.cancel();
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Keys queued and not being processed. */
  len(): number {
    return this.queue.length;
  }

  private take(key: string, getter: (key: string | undefined) => void): void {
    getter(this.markProcessing(key));
  }

  private markProcessing(key: string): string {
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }
}

export interface WorkerOptions {
  /** Number of keys processed at once (client-go's workers argument); default 1. */
  workers?: number;
  /** Told about each failed key (it is retried rate-limited). */
  onError?: (key: string, err: unknown) => void;
}

/**
 * client-go's processNextWorkItem loop with N workers: each takes a key, reconciles it, forgets it
 * on success or re-adds it rate-limited on failure, and marks it done. Stops when the signal
 * aborts (the queue is shut down) and resolves once every worker has finished its key.
 */
export async function runWorkers(queue: WorkQueue, reconcile: (key: string) => Promise<void>, signal: AbortSignal, o: WorkerOptions = {}): Promise<void> {
  const stop = () => queue.shutDown();
  if (signal.aborted) stop();
  signal.addEventListener('abort', stop, { once: true });
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await reconcile(key);
        queue.forget(key);
      } catch (err) {
        if (!signal.aborted) o.onError?.(key, err);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, o.workers ?? 1) }, worker));
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
