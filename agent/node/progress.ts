/**
 * Records when the agent's loops last made progress (an attempt finished, successful or not), so
 * the systemd watchdog can tell a stuck agent (a loop blocked forever) from one that is merely
 * failing to reach the API server (which restarting would not cure).
 */
import type { Clock } from '../platform/clock';

export class ProgressTracker {
  private last: number;
  private lastOk: number | undefined;
  constructor(private readonly clock: Clock) {
    this.last = clock.now();
  }

  /** Notes that a loop finished an attempt (whatever its outcome). */
  mark(): void {
    this.last = this.clock.now();
  }

  /** Notes a successful heartbeat; also counts as progress. */
  succeeded(): void {
    this.last = this.lastOk = this.clock.now();
  }

  /** Milliseconds since the last progress. */
  sinceProgressMs(): number {
    return this.clock.now() - this.last;
  }

  /** Milliseconds since the last success, or undefined before the first one. */
  sinceSuccessMs(): number | undefined {
    return this.lastOk === undefined ? undefined : this.clock.now() - this.lastOk;
  }

  /** True when progress happened within the last `boundMs`. */
  healthy(boundMs: number): boolean {
    return this.sinceProgressMs() <= boundMs;
  }
}
