/**
 * Computes the Node status the agent wants to report: the kubelet's status setters (addresses,
 * machine info, capacity, version info, pressure conditions, Ready) in one place, each fed by
 * an injected reader so tests can drive them.
 */
import type { PressureSignals } from '../platform/pressure';
import { pressureConditions } from '../platform/pressure';
import type { MachineInfo } from '../platform/machine';
import type { NodeAddress } from './addresses';
import { nodeAllocatable, nodeCapacity, type ResourceInputs, type ResourceList } from './node-resources';
import type { DesiredNodeStatus, NodeCondition } from './node-status';
import type { ReadinessSource } from './readiness';
import type { RuntimeStatusProvider } from './runtime-status';

export interface StatusSourceDeps {
  machine: MachineInfo;
  /** Current addresses (re-read each time: DHCP may change them). */
  addresses: () => NodeAddress[];
  /** Current pressures (already smoothed by the transition period). Rejects when the signals cannot be read. */
  pressure: () => Promise<PressureSignals>;
  readiness: ReadinessSource;
  runtime: RuntimeStatusProvider;
  resources: Omit<ResourceInputs, 'machine'>;
  svcVersion: string;
  declaredFeatures: readonly string[];
  /** The agent's HTTPS port (config port), published as status.daemonEndpoints. */
  port: number;
  /**
   * Extended resources advertised by device plugins (capacity: all devices, allocatable: healthy
   * ones); added to the machine's resources. Read at every computation.
   */
  extendedResources?: () => { capacity: ResourceList; allocatable: ResourceList };
}

/** Upstream's reason strings are kept: tools and dashboards match on them. */
export function readyCondition(ready: boolean, problems: readonly string[]): NodeCondition {
  return ready
    ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'svc-node is posting ready status' }
    : { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: problems.join('; ') };
}

export class NodeStatusSource {
  constructor(private readonly d: StatusSourceDeps) {}

  /** One computation. Pressure that cannot be read is reported as Unknown conditions, never as a rejection. */
  async compute(): Promise<DesiredNodeStatus> {
    const m = this.d.machine;
    const [readiness, runtimeVersion] = await Promise.all([this.d.readiness.evaluate(), this.d.runtime.runtimeVersion()]);
    let pressure: NodeCondition[];
    try {
      pressure = pressureConditions(await this.d.pressure());
    } catch (e) {
      const message = `cannot read pressure signals: ${(e as Error).message}`;
      pressure = (['MemoryPressure', 'DiskPressure', 'PIDPressure'] as const).map((type) => ({ type, status: 'Unknown', reason: 'NodeStatusUnknown', message }));
    }
    const resources: ResourceInputs = { ...this.d.resources, machine: m };
    const extended = this.d.extendedResources?.() ?? { capacity: {}, allocatable: {} };
    return {
      addresses: this.d.addresses(),
      capacity: { ...nodeCapacity(resources), ...extended.capacity },
      allocatable: { ...nodeAllocatable(resources), ...extended.allocatable },
      conditions: [...pressure, readyCondition(readiness.ready, readiness.problems)],
      nodeInfo: {
        machineID: m.machineID,
        systemUUID: m.systemUUID,
        bootID: m.bootID,
        kernelVersion: m.kernelVersion,
        osImage: m.osImage,
        containerRuntimeVersion: runtimeVersion,
        kubeletVersion: this.d.svcVersion,
        kubeProxyVersion: '',
        operatingSystem: m.operatingSystem,
        architecture: m.architecture,
      },
      declaredFeatures: [...this.d.declaredFeatures],
      daemonEndpoints: { kubeletEndpoint: { Port: this.d.port } },
    };
  }
}
