/** Shared inputs for node tests: a machine, a status source and an identity. */
import type { MachineInfo } from '../../../../../agent/platform/machine';
import type { PressureSignals } from '../../../../../agent/platform/pressure';
import { nodeLabels, type NodeIdentity } from '../../../../../agent/node/node-object';
import { ReadinessSource } from '../../../../../agent/node/readiness';
import { unknownRuntime } from '../../../../../agent/node/runtime-status';
import { NodeStatusSource } from '../../../../../agent/node/status-source';

export const machine: MachineInfo = {
  cpuCores: 4,
  memoryBytes: 8 * 2 ** 30,
  ephemeralStorageBytes: 100 * 2 ** 30,
  pidMax: 4194304,
  kernelVersion: '6.1.0-test',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  bootID: 'boot-1',
  machineID: 'machine-1',
  systemUUID: 'uuid-1',
  architecture: 'amd64',
  operatingSystem: 'linux',
};

export interface TestStatus {
  source: NodeStatusSource;
  readiness: ReadinessSource;
  pressure: PressureSignals;
  addresses: { type: 'InternalIP' | 'Hostname'; address: string }[];
}

export function testStatus(): TestStatus {
  const t: TestStatus = {
    readiness: new ReadinessSource(),
    pressure: { memory: false, disk: false, pid: false },
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'Hostname', address: 'node-a' },
    ],
    source: undefined as unknown as NodeStatusSource,
  };
  t.source = new NodeStatusSource({
    machine,
    addresses: () => t.addresses.map((a) => ({ ...a })),
    pressure: () => Promise.resolve({ ...t.pressure }),
    readiness: t.readiness,
    runtime: unknownRuntime,
    resources: { maxPods: 110 },
    svcVersion: 'v0.1.0',
    declaredFeatures: ['ContainerCheckpoint'],
    port: 10250,
  });
  return t;
}

export function identity(name = 'node-a', extra: Record<string, string> = {}): NodeIdentity {
  return { name, labels: nodeLabels(name, machine, extra), taints: [] };
}
