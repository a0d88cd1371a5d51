/**
 * Per-key exponential back-off as upstream's client-go flowcontrol.Backoff, which the kubelet uses
 * for crash loops and image pulls: 10 s first, doubling to a 5 min cap, and forgotten once the
 * key has been quiet for twice the cap. Times are the caller's (a container's finishedAt for crash
 * loops, "now" for pulls), the clock only answers "how long ago".
 */
import type { Clock } from '../platform/clock';

export const DEFAULT_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 300_000;

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

export class FlowBackoff {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly initialMs = DEFAULT_BACKOFF_MS,
    private readonly maxMs = MAX_BACKOFF_MS,
  ) {}

  private expired(eventTime: number, e: Entry): boolean {
    return eventTime - e.lastUpdate > 2 * this.maxMs;
  }

  /** The current back-off of the key (0 when it has none). */
  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Records a failure at eventTime: the first (or first after a quiet period) gets the initial delay, later ones double it. */
  next(key: string, eventTime: number): void {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTime, e)) {
      this.entries.set(key, { backoffMs: this.initialMs, lastUpdate: this.clock.now() });
      return;
    }
    e.backoffMs = Math.min(e.backoffMs * 2, this.maxMs);
    e.lastUpdate = this.clock.now();
  }

  /** True while less than the key's back-off has passed since eventTime (upstream IsInBackOffSince). */
  isInBackOffSince(key: string, eventTime: number): boolean {
    const e = this.entries.get(key);
    if (!e || this.expired(eventTime, e)) return false;
    return this.clock.now() - eventTime < e.backoffMs;
  }

  /** True while less than the key's back-off has passed since its last failure (upstream IsInBackOffSinceUpdate). */
  isInBackOffSinceUpdate(key: string): boolean {
    const e = this.entries.get(key);
    if (!e || this.expired(this.clock.now(), e)) return false;
    return this.clock.now() - e.lastUpdate < e.backoffMs;
  }

  /** Milliseconds until the back-off since eventTime ends (0 when not backing off). */
  remaining(key: string, eventTime: number): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(0, eventTime + e.backoffMs - this.clock.now());
  }

  /** Milliseconds until the back-off since the key's last failure ends (0 when not backing off). */
  remainingSinceUpdate(key: string): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(0, e.lastUpdate + e.backoffMs - this.clock.now());
  }

  /** Forgets keys starting with prefix (a pod that is gone). */
  forgetPrefix(prefix: string): void {
    for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k);
  }
}

/** A duration as Go's time.Duration String() prints whole seconds: "10s", "1m20s", "5m0s". */
export function goDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 60) return `${total}s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${m}m${s}s` : `${m}m${s}s`;
}
