/**
 * The devices provider over the agent's device manager (its DeviceInfo view): the adapter lives
 * here, at the consumer, as pod-manager-pods.ts does for pods, because podresources/ sits above
 * devices/ and the manager must not know the pod resources API's shapes.
 */
import type { DeviceInfo } from '../devices/device-info';
import type { DeviceSet, DevicesProvider } from './provider';

/** Pod resources: healthy devices one entry each (with their NUMA nodes), and a container's devices per resource. */
export function podResourcesDevices(info: DeviceInfo): DevicesProvider {
  const topologyOf = (numa: readonly number[]) => (numa.length > 0 ? { topology: { nodes: numa.map((ID) => ({ ID })) } } : {});
  return {
    allocatable(): DeviceSet[] {
      const out: DeviceSet[] = [];
      for (const [resourceName, devices] of info.allocatable()) {
        // Upstream's GetAllocatableResources reports healthy devices only.
        for (const d of devices) if (d.healthy) out.push({ resourceName, deviceIds: [d.id], ...topologyOf(d.numaNodes) });
      }
      return out;
    },
    devicesFor(podUid: string, containerName: string): DeviceSet[] {
      // Topology of each group: the NUMA nodes of the devices it holds (upstream reports them per device group).
      return info.devicesFor(podUid, containerName).map((c) => ({ resourceName: c.resourceName, deviceIds: c.deviceIds, ...topologyOf(c.numaNodes) }));
    },
  };
}
