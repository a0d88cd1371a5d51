/**
 * One conversation with a plugin's registration socket: dial (10 s), GetInfo (1 s),
 * NotifyRegistrationStatus (5 s): upstream's deadlines (pluginmanager operation generator).
 * A socket nobody listens on (a plugin that died without removing it) fails the dial at once.
 */
import * as grpc from '@grpc/grpc-js';
import { loadRegistrationProto, type PluginInfo, type RegistrationStatus } from './registration-proto';

export interface PluginTimeouts {
  dialMs: number;
  getInfoMs: number;
  notifyMs: number;
}

export const UPSTREAM_TIMEOUTS: PluginTimeouts = { dialMs: 10_000, getInfoMs: 1000, notifyMs: 5000 };

type UnaryFn<Req, Res> = (req: Req, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => void;

export class PluginClient {
  private readonly client: grpc.Client;

  constructor(
    readonly socketPath: string,
    private readonly timeouts: PluginTimeouts = UPSTREAM_TIMEOUTS,
  ) {
    const Registration = loadRegistrationProto();
    // No retries on a dead socket: a refused connect fails the call instead of waiting for the deadline.
    this.client = new Registration(`unix://${socketPath}`, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
  }

  /**
   * Waits until connected; rejects when the socket does not answer within the dial deadline, or
   * at the first failed connect (upstream's blocking dial would keep trying for the whole 10 s;
   * a unix socket nobody listens on will not start answering, and the registry retries anyway).
   */
  connect(): Promise<void> {
    const channel = this.client.getChannel();
    const deadline = Date.now() + this.timeouts.dialMs;
    return new Promise((resolve, reject) => {
      const step = () => {
        const state = channel.getConnectivityState(true);
        if (state === grpc.connectivityState.READY) return resolve();
        if (state === grpc.connectivityState.TRANSIENT_FAILURE || state === grpc.connectivityState.SHUTDOWN) {
          return reject(new Error(`dial failed at socket ${this.socketPath}: nothing accepts connections there`));
        }
        channel.watchConnectivityState(state, deadline, (err) => {
          if (err) reject(new Error(`dial failed at socket ${this.socketPath}: no connection within ${this.timeouts.dialMs} ms`));
          else step();
        });
      };
      step();
    });
  }

  getInfo(): Promise<PluginInfo> {
    return this.call<object, PluginInfo>('GetInfo', {}, this.timeouts.getInfoMs);
  }

  async notify(status: RegistrationStatus): Promise<void> {
    await this.call<RegistrationStatus, object>('NotifyRegistrationStatus', status, this.timeouts.notifyMs);
  }

  close(): void {
    this.client.close();
  }

  private call<Req, Res>(method: string, req: Req, timeoutMs: number): Promise<Res> {
    const fn = (this.client as unknown as Record<string, UnaryFn<Req, Res>>)[method].bind(this.client);
    return new Promise((resolve, reject) =>
      fn(req, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(new Error(`${method} at socket ${this.socketPath}: ${err.details || err.message}`)) : resolve(res!))),
    );
  }
}
