/**
 * The agent's own health for the systemd watchdog: once the heartbeat loops (Lease and node
 * status) have started, the agent is healthy while every one of them keeps finishing attempts,
 * successful or not. A loop blocked forever stops the keep-alives and systemd restarts the agent;
 * an unreachable API server does not (a restart would not fix it). Before the loops start, each
 * start-up phase has its own bounds, so the agent counts as healthy.
 */
import type { ProgressTracker } from './progress';

export interface HeartbeatHealthOptions {
  /** Per-request deadline of the API client. */
  requestTimeoutMs: number;
}

export interface TrackedLoop {
  progress: ProgressTracker;
  /** The longest a working loop waits between attempts (its interval, or its largest back-off step). */
  periodMs: number;
  /** Requests one attempt may make at most (each bounded by the request deadline). */
  requestsPerAttempt: number;
  /** Never call the loop stuck sooner than this (e.g. the lease duration). */
  minStuckMs?: number;
}

export class HeartbeatHealth {
  private readonly loops: (TrackedLoop & { stuckAfterMs: number })[] = [];
  constructor(private readonly o: HeartbeatHealthOptions) {}

  /**
   * Starts watching a loop. It counts as stuck after twice the longest time a working loop can
   * take between two finished attempts (period plus its requests' deadlines).
   */
  track(loop: TrackedLoop): number {
    const stuckAfterMs = Math.max(loop.minStuckMs ?? 0, 2 * (loop.periodMs + loop.requestsPerAttempt * this.o.requestTimeoutMs));
    this.loops.push({ ...loop, stuckAfterMs });
    loop.progress.mark();
    return stuckAfterMs;
  }

  /** True unless a tracked loop has made no progress for its stuck bound. Never throws. */
  healthy(): boolean {
    return this.loops.every((l) => l.progress.healthy(l.stuckAfterMs));
  }
}
