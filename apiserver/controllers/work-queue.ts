/**
 * A de-duplicating work queue with delayed re-adds, as controllers use upstream: a key queued
 * twice is processed once; a failed or unfinished key comes back after a delay.
 */
export class WorkQueue {
  private readonly pending = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private wake?: () => void;

  add(key: string): void {
    this.pending.add(key);
    this.wake?.();
  }

  addAfter(key: string, ms: number): void {
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.add(key);
      }, ms),
    );
  }

  /** Calls fn for each key until the signal aborts; fn errors re-queue the key after retryMs. */
  async run(signal: AbortSignal, fn: (key: string) => Promise<void>, onError: (key: string, err: unknown) => void, retryMs = 1000): Promise<void> {
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const next = this.pending.values().next();
        if (next.done) {
          await new Promise<void>((r) => (this.wake = r));
          this.wake = undefined;
          continue;
        }
        this.pending.delete(next.value);
        try {
          await fn(next.value);
        } catch (err) {
          onError(next.value, err);
          this.addAfter(next.value, retryMs);
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      for (const t of this.timers.values()) clearTimeout(t);
      this.timers.clear();
    }
  }
}
