import type { Timers } from './timers';

/**
 * The scheduler's queue of pod keys (namespace/name): a key queued twice is tried once; a key may
 * wait out a back-off before it becomes active again (upstream's activeQ and backoffQ, minus
 * priority ordering: keys come out in the order they became active).
 */
export class SchedulingQueue {
  private readonly active = new Set<string>();
  private readonly backingOff = new Map<string, () => void>();
  private wake?: () => void;

  constructor(private readonly timers: Timers) {}

  /** Makes the key active now, ending any back-off it was waiting out. */
  add(key: string): void {
    this.backingOff.get(key)?.();
    this.backingOff.delete(key);
    this.active.add(key);
    this.wake?.();
  }

  /** Makes the key active after ms, unless it is already active or waiting. */
  addAfter(key: string, ms: number): void {
    if (this.active.has(key) || this.backingOff.has(key)) return;
    const cancel = this.timers.after(ms, () => {
      this.backingOff.delete(key);
      this.active.add(key);
      this.wake?.();
    });
    this.backingOff.set(key, cancel);
  }

  /** Drops the key wherever it is (the pod was bound or deleted). */
  forget(key: string): void {
    this.backingOff.get(key)?.();
    this.backingOff.delete(key);
    this.active.delete(key);
  }

  /** True when the key is active or backing off. */
  has(key: string): boolean {
    return this.active.has(key) || this.backingOff.has(key);
  }

  /** The next active key, waiting for one; undefined once the signal aborts. */
  async next(signal: AbortSignal): Promise<string | undefined> {
    while (!signal.aborted) {
      const first = this.active.values().next();
      if (!first.done) {
        this.active.delete(first.value);
        return first.value;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.wake = undefined;
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return undefined;
  }

  /** Cancels every back-off timer. */
  close(): void {
    for (const cancel of this.backingOff.values()) cancel();
    this.backingOff.clear();
  }
}
