/**
 * The device manager seen through the interfaces its other consumers define: the pod resources
 * server's DevicesProvider and the plugin registry's DevicePluginRegistrar. Kept apart from the
 * manager so that neither consumer's shape leaks into it.
 */
import type { DeviceSet, DevicesProvider } from '../podresources/provider';
import type { DevicePluginRegistrar } from '../pluginregistry/registrar';
import type { DeviceManager } from './device-manager';
import type { DeviceInfo } from './device-info';

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

/** Plugin registry: device plugins announced in plugins_registry/ register with the manager like those calling kubelet.sock. */
export function pluginRegistryRegistrar(m: DeviceManager): DevicePluginRegistrar {
  return {
    async register(resourceName: string, endpoint: string, versions: readonly string[]): Promise<void> {
      const problem = m.validatePlugin(resourceName, versions);
      if (problem) throw new Error(problem);
      await m.registerPlugin(resourceName, endpoint);
    },
    deregister(resourceName: string, endpoint: string): void {
      // A later registration (either way) replaced this endpoint: its socket going away changes nothing.
      if (m.currentEndpoint(resourceName) === endpoint) m.deregisterPlugin(resourceName);
    },
  };
}
