/**
 * The agent's side of one device plugin's socket (upstream: the device manager's endpoint): dials
 * the plugin, reads its options, follows its ListAndWatch stream and makes the per-container
 * calls, each with a deadline so that a plugin that hangs cannot hold a pod's admission forever.
 */
import { existsSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { allocationFromWire, type ContainerAllocation } from './container-allocation';
import { loadDevicePluginProto } from './device-plugin-proto';
import type { WAllocateResponse, WDevice, WDevicePluginOptions, WListAndWatchResponse, WPreferredAllocationResponse } from './wire';
import { AgentError, Kinds } from '../errors';

export interface PluginOptions {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

export interface PluginDevice {
  id: string;
  healthy: boolean;
  /** NUMA node IDs the device is attached to (empty when the plugin gives none). */
  numaNodes: number[];
}

/** A gRPC call to the plugin failed or timed out; `message` names the call and the socket. */
export class PluginCallError extends AgentError {
  override readonly name = 'PluginCallError';
  override readonly code = 'SVC_NODE_ERR_PLUGIN_CALL';
  constructor(
    message: string,
    /** True for DEADLINE_EXCEEDED; otherwise the plugin could not be reached or answered wrongly (UNAVAILABLE). */
    readonly timedOut: boolean,
  ) {
    super(message, timedOut ? Kinds.DeadlineExceeded : Kinds.Unavailable);
  }
}

/** What the device manager needs from a plugin connection; faked in unit tests. */
export interface PluginClient {
  readonly socketPath: string;
  /** Waits until the socket answers and returns GetDevicePluginOptions. Rejects PluginCallError. */
  connect(timeoutMs: number): Promise<PluginOptions>;
  /** Follows ListAndWatch: `onDevices` gets every full list; `onEnd` once, when the stream ends or fails. */
  watch(onDevices: (devices: PluginDevice[]) => void, onEnd: (why: string) => void): void;
  preferred(available: string[], mustInclude: string[], size: number, timeoutMs: number): Promise<string[]>;
  /** Allocate for one container's devices. Rejects PluginCallError. */
  allocate(deviceIds: string[], timeoutMs: number): Promise<ContainerAllocation>;
  preStart(deviceIds: string[], timeoutMs: number): Promise<void>;
  /** Cancels the stream and closes the channel; `onEnd` is not called afterwards. */
  close(): void;
}

type Unary = (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => grpc.ClientUnaryCall;

export function deviceFromWire(d: WDevice): PluginDevice {
  return {
    id: d.ID,
    healthy: d.health === 'Healthy',
    numaNodes: (d.topology?.nodes ?? []).map((n) => Number(n.ID)).filter((n) => Number.isInteger(n) && n >= 0),
  };
}

export class GrpcPluginClient implements PluginClient {
  private readonly client: grpc.Client;
  private stream: grpc.ClientReadableStream<WListAndWatchResponse> | undefined;
  private closed = false;

  constructor(
    readonly socketPath: string,
    private readonly resourceName: string,
  ) {
    const proto = loadDevicePluginProto();
    this.client = new proto.DevicePlugin(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
  }

  private unary<T>(method: string, req: unknown, timeoutMs: number): Promise<T> {
    const fn = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    return new Promise((resolve, reject) => {
      fn(req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (!err) return resolve(res as T);
        const timedOut = err.code === grpc.status.DEADLINE_EXCEEDED;
        const what = timedOut ? `did not answer within ${timeoutMs} ms` : `failed: ${err.details || err.message}`;
        reject(new PluginCallError(`device plugin ${this.resourceName} (${this.socketPath}): ${method} ${what}`, timedOut));
      });
    });
  }

  async connect(timeoutMs: number): Promise<PluginOptions> {
    // No socket file: fail now rather than after the whole dial timeout.
    if (!existsSync(this.socketPath)) throw new PluginCallError(`cannot reach device plugin endpoint ${this.socketPath}: no such socket`, false);
    await new Promise<void>((resolve, reject) => {
      this.client.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err) reject(new PluginCallError(`cannot reach device plugin endpoint ${this.socketPath}: ${err.message}`, true));
        else resolve();
      });
    });
    const o = await this.unary<WDevicePluginOptions>('GetDevicePluginOptions', {}, timeoutMs);
    return { preStartRequired: o.pre_start_required === true, getPreferredAllocationAvailable: o.get_preferred_allocation_available === true };
  }

  watch(onDevices: (devices: PluginDevice[]) => void, onEnd: (why: string) => void): void {
    const fn = (this.client as unknown as Record<string, (req: unknown) => grpc.ClientReadableStream<WListAndWatchResponse>>)['ListAndWatch'].bind(this.client);
    const stream = fn({});
    this.stream = stream;
    let ended = false;
    const end = (why: string) => {
      if (ended || this.closed) return;
      ended = true;
      onEnd(why);
    };
    stream.on('data', (m: WListAndWatchResponse) => {
      if (!this.closed) onDevices((m.devices ?? []).map(deviceFromWire));
    });
    stream.on('error', (e: grpc.ServiceError) => end(`ListAndWatch failed: ${e.details || e.message}`));
    stream.on('end', () => end('ListAndWatch stream ended'));
    stream.on('close', () => end('ListAndWatch stream closed'));
  }

  async preferred(available: string[], mustInclude: string[], size: number, timeoutMs: number): Promise<string[]> {
    const res = await this.unary<WPreferredAllocationResponse>(
      'GetPreferredAllocation',
      { container_requests: [{ available_deviceIDs: available, must_include_deviceIDs: mustInclude, allocation_size: size }] },
      timeoutMs,
    );
    return res.container_responses?.[0]?.deviceIDs ?? [];
  }

  async allocate(deviceIds: string[], timeoutMs: number): Promise<ContainerAllocation> {
    const res = await this.unary<WAllocateResponse>('Allocate', { container_requests: [{ devices_ids: deviceIds }] }, timeoutMs);
    const n = res.container_responses?.length ?? 0;
    if (n !== 1) throw new PluginCallError(`device plugin ${this.resourceName} (${this.socketPath}): Allocate answered ${n} container responses for 1 container request`, false);
    return allocationFromWire(res.container_responses[0]);
  }

  async preStart(deviceIds: string[], timeoutMs: number): Promise<void> {
    await this.unary<unknown>('PreStartContainer', { devices_ids: deviceIds }, timeoutMs);
  }

  close(): void {
    this.closed = true;
    this.stream?.cancel();
    this.client.close();
  }
}
