/**
 * The time seam of the informer and the work queue, so tests drive them with fake time: a reading
 * of the current time and one-shot timers (the shape of apiserver/scheduler/timers.ts `after`).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once after ms; the returned function cancels it (a no-op once fired). */
  after(ms: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(t);
  },
};

/** Waits ms on the clock; resolves true when the time passed, false as soon as the signal aborts. Never rejects. */
export function sleepOn(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.after(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
