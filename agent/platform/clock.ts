/** Time seam for the agent's loops, so unit tests drive them with fake time. */
export interface Clock {
  /** Milliseconds since the epoch. Never blocks. */
  now(): number;
  /** Waits ms; resolves true when the time passed, false as soon as `signal` aborts. Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/** Source of randomness in [0, 1) for jitter; injectable so tests are deterministic. */
export type Random = () => number;
