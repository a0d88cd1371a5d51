/**
 * The simulator's door: every RPC passes here first. It owns what the test controls set about
 * the runtime as a whole: down (every call Unavailable, as a gone socket makes them on containerd),
 * closed, failures queued for the next calls of one RPC, and per-RPC latency on the injected clock
 * (past a call's timeoutMs it rejects DeadlineExceeded, as a gRPC deadline would).
 */
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions } from './runtime-service';

/** The message of every call while the runtime is down or closed. */
export const DOWN = 'connection refused: runtime is down';

/** A queued failure for the next calls of one RPC. */
interface Fault {
  error: RuntimeError;
  remaining: number;
}

export class SimGate {
  private readonly faults = new Map<string, Fault>();
  private readonly latency = new Map<string, number>();
  private available = true;
  private closed = false;

  constructor(private readonly clock: Clock) {}

  /** Whether calls get through: neither closed nor down. */
  get open(): boolean {
    return !this.closed && this.available;
  }

  setAvailable(available: boolean): void {
    this.available = available;
  }

  injectFault(rpc: string, error: RuntimeError, times = 1): void {
    this.faults.set(rpc, { error, remaining: times });
  }

  setLatency(rpc: string, ms: number): void {
    if (ms > 0) this.latency.set(rpc, ms);
    else this.latency.delete(rpc);
  }

  /** Closes the door for good; false when it already was. */
  close(): boolean {
    if (this.closed) return false;
    this.closed = true;
    return true;
  }

  /** Availability, injected faults, then simulated latency. */
  async enter(rpc: string, opts?: CallOptions): Promise<void> {
    if (this.closed || !this.available) throw new RuntimeError('Unavailable', DOWN, rpc);
    if (opts?.signal?.aborted) throw new RuntimeError('Canceled', `${rpc} canceled`, rpc);
    const fault = this.faults.get(rpc);
    if (fault) {
      if (--fault.remaining <= 0) this.faults.delete(rpc);
      throw fault.error;
    }
    const delay = this.latency.get(rpc) ?? 0;
    if (delay > 0) {
      const limit = opts?.timeoutMs;
      const waited = await this.clock.sleep(limit !== undefined ? Math.min(limit, delay) : delay, opts?.signal);
      if (!waited) throw new RuntimeError('Canceled', `${rpc} canceled`, rpc);
      if (limit !== undefined && limit < delay) throw new RuntimeError('DeadlineExceeded', 'context deadline exceeded', rpc);
    }
  }
}
