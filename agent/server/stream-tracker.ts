/**
 * Counts the node's streaming connections (exec, attach, port-forward) against
 * maxStreamingConnections, and the runtime streams behind them; read by /metrics and tests. Every
 * acquisition is released exactly once (releasing twice is harmless).
 */
import { ResourceExhaustedError } from '../errors';

export class StreamTracker {
  private open = 0;
  private runtime = 0;

  constructor(private readonly max: number) {}

  connections(): number {
    return this.open;
  }

  runtimeStreams(): number {
    return this.runtime;
  }

  /** Takes a connection slot; throws 429 when the node's limit is reached. Returns its release. */
  acquireConnection(): () => void {
    if (this.open >= this.max) {
      throw new ResourceExhaustedError(`too many streaming connections on this node (maxStreamingConnections is ${this.max}); try again later`);
    }
    this.open++;
    return this.once(() => this.open--);
  }

  /** Counts a runtime stream until the returned release is called. */
  acquireRuntime(): () => void {
    this.runtime++;
    return this.once(() => this.runtime--);
  }

  private once(f: () => void): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      f();
    };
  }
}
