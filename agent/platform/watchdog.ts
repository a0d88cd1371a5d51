/**
 * The systemd watchdog keep-alive loop: WATCHDOG=1 every half of WatchdogSec (the interval
 * systemd recommends, spec section 8), sent only while the agent reports itself healthy. When the
 * heartbeat loop is stuck, healthy() turns false, the keep-alives stop, and systemd kills and
 * restarts the agent (Restart=). Start it before the slow parts of start-up.
 */
import type { Log } from './logger';
import type { SdNotifier } from '../../common/systemd';

/** Timer seam (fake timers in tests). */
export interface Timers {
  /** Schedules fn once after ms; returns a handle for clearTimeout. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a pending timer; no-op for a fired one. */
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface WatchdogOptions {
  notifier: SdNotifier;
  /** WatchdogSec in ms (notifier.watchdogIntervalMs()); undefined or 0 disables the loop. */
  intervalMs: number | undefined;
  /** The agent's own health; a throw counts as unhealthy. */
  healthy: () => boolean;
  timers?: Timers;
  log?: Log;
}

export class Watchdog {
  constructor(private readonly opts: WatchdogOptions) {}

  /** Period between keep-alives in ms, or undefined when the watchdog is off. */
  get periodMs(): number | undefined {
    const i = this.opts.intervalMs;
    return i && i > 0 ? Math.max(1, Math.floor(i / 2)) : undefined;
  }

  /** Sends keep-alives until `signal` aborts; resolves at once when the watchdog is off. Never rejects. */
  run(signal: AbortSignal): Promise<void> {
    const period = this.periodMs;
    if (period === undefined || signal.aborted) return Promise.resolve();
    const timers = this.opts.timers ?? realTimers;
    let withheld = false;
    return new Promise<void>((done) => {
      let handle: unknown;
      const tick = () => {
        let ok: boolean;
        try {
          ok = this.opts.healthy();
        } catch {
          ok = false;
        }
        if (ok) {
          this.opts.notifier.watchdog();
          if (withheld) this.opts.log?.info({}, 'agent healthy again; watchdog keep-alives resumed');
          withheld = false;
        } else if (!withheld) {
          withheld = true;
          this.opts.log?.error({ intervalMs: this.opts.intervalMs }, 'agent unhealthy; withholding watchdog keep-alives so systemd restarts it');
        }
        handle = timers.setTimeout(tick, period);
      };
      signal.addEventListener(
        'abort',
        () => {
          timers.clearTimeout(handle);
          done();
        },
        { once: true },
      );
      tick();
    });
  }
}
