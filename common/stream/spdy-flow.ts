/**
 * SPDY/3.1 flow control (draft 3.1, 2.6.8): each side may send on a stream (and on the session)
 * only as many data bytes as the receiver's window holds; the receiver grows it with
 * WINDOW_UPDATE as its consumer takes the data. Windows start at 64 KiB.
 */

export const DEFAULT_WINDOW = 64 * 1024;

/** Our view of the peer's receive window: what we may still send. */
export class SendWindow {
  private available: number;
  private waiters: (() => void)[] = [];

  /** enforced false: counted, but sends never wait (a peer that keeps no windows). */
  constructor(
    initial: number,
    private enforced: boolean,
  ) {
    this.available = initial;
  }

  get size(): number {
    return this.available;
  }

  /** A WINDOW_UPDATE (or a changed initial window) arrived. */
  grow(delta: number): void {
    this.available += delta;
    if (this.available > 0) this.wake();
  }

  /** How many of `wanted` bytes may go now (0: wait with whenOpen). */
  allowance(wanted: number): number {
    if (!this.enforced) return wanted;
    return Math.max(0, Math.min(wanted, this.available));
  }

  consume(n: number): void {
    this.available -= n;
  }

  /** Resolves when the window has room (or is released by close). */
  whenOpen(): Promise<void> {
    if (!this.enforced || this.available > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Wakes every waiter and stops waiting (the stream or session ended). */
  release(): void {
    this.enforced = false;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}
