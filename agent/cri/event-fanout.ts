/**
 * Fans events out to any number of async-iterator subscribers, each with its own unbounded queue.
 * A subscriber ends quietly when its signal aborts, and throws when the source fails it (the
 * runtime "went away").
 */

interface Subscriber<T> {
  queue: T[];
  failure?: Error;
  wake?: () => void;
}

export class EventFanout<T> {
  private readonly subscribers = new Set<Subscriber<T>>();

  /** Number of live subscribers (for tests and leak checks). */
  get size(): number {
    return this.subscribers.size;
  }

  /** Queues the event for every current subscriber. */
  publish(event: T): void {
    for (const s of this.subscribers) {
      s.queue.push(event);
      s.wake?.();
    }
  }

  /** Ends every current subscriber by throwing `error` from its iteration. */
  failAll(error: Error): void {
    for (const s of this.subscribers) {
      s.failure = error;
      s.wake?.();
    }
  }

  /** Events published from now on, until `signal` aborts or the fanout fails the subscriber. */
  async *subscribe(signal?: AbortSignal): AsyncGenerator<T> {
    if (signal?.aborted) return;
    const sub: Subscriber<T> = { queue: [] };
    this.subscribers.add(sub);
    const onAbort = () => sub.wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        const next = sub.queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (sub.failure !== undefined) throw sub.failure;
        await new Promise<void>((resolve) => (sub.wake = resolve));
        sub.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.subscribers.delete(sub);
    }
  }
}
