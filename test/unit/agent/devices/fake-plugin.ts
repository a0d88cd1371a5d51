/** A PluginClient driven by the test: devices pushed by hand, calls recorded, answers scripted. */
import { allocationFromWire, type ContainerAllocation } from '../../../../agent/devices/container-allocation';
import { PluginCallError, type PluginClient, type PluginDevice, type PluginOptions } from '../../../../agent/devices/plugin-client';

export class FakePlugin implements PluginClient {
  closed = false;
  reachable = true;
  options: PluginOptions = { preStartRequired: false, getPreferredAllocationAvailable: false };
  readonly allocateCalls: string[][] = [];
  readonly preStartCalls: string[][] = [];
  readonly preferredCalls: { available: string[]; mustInclude: string[]; size: number }[] = [];
  /** Answer of GetPreferredAllocation (default: the last `size` available IDs). */
  preferAnswer: ((available: string[], mustInclude: string[], size: number) => string[]) | undefined;
  /** Allocate never answers (the client times out). */
  hang = false;
  private onDevices: ((d: PluginDevice[]) => void) | undefined;
  private onEnd: ((why: string) => void) | undefined;

  constructor(
    readonly socketPath: string,
    readonly resourceName: string,
  ) {}

  connect(): Promise<PluginOptions> {
    if (!this.reachable) return Promise.reject(new PluginCallError(`cannot reach device plugin endpoint ${this.socketPath}: connection refused`, true));
    return Promise.resolve(this.options);
  }

  watch(onDevices: (d: PluginDevice[]) => void, onEnd: (why: string) => void): void {
    this.onDevices = onDevices;
    this.onEnd = onEnd;
  }

  /** Sends a device list as ListAndWatch would. */
  send(devices: { id: string; healthy?: boolean; numa?: number }[]): void {
    this.onDevices?.(devices.map((d) => ({ id: d.id, healthy: d.healthy !== false, numaNodes: d.numa === undefined ? [] : [d.numa] })));
  }

  /** Ends the ListAndWatch stream (the plugin died). */
  die(): void {
    this.onEnd?.('ListAndWatch stream ended');
  }

  preferred(available: string[], mustInclude: string[], size: number): Promise<string[]> {
    this.preferredCalls.push({ available, mustInclude, size });
    return Promise.resolve(this.preferAnswer ? this.preferAnswer(available, mustInclude, size) : available.slice(-size));
  }

  allocate(ids: string[], timeoutMs: number): Promise<ContainerAllocation> {
    this.allocateCalls.push(ids);
    if (this.hang) return Promise.reject(new PluginCallError(`device plugin ${this.resourceName} (${this.socketPath}): Allocate did not answer within ${timeoutMs} ms`, true));
    return Promise.resolve(
      allocationFromWire({
        envs: { FAKE_DEVICES: ids.join(',') },
        mounts: [],
        devices: ids.map((id) => ({ container_path: `/dev/${id}`, host_path: `/dev/${id}`, permissions: 'rw' })),
        annotations: {},
        cdi_devices: [],
      }),
    );
  }

  preStart(ids: string[]): Promise<void> {
    this.preStartCalls.push(ids);
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
  }
}
