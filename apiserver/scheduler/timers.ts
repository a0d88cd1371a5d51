/** Timers injected into the scheduler and the taint eviction controller, so tests drive time. */
export interface Timers {
  /** Calls fn once after ms; the returned function cancels it (a no-op once fired). */
  after(ms: number, fn: () => void): () => void;
}

export const realTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};
