/**
 * The device manager seen through the interface the plugin registry (below devices/) defines,
 * its DevicePluginRegistrar. Kept apart from the manager so that the consumer's shape does not
 * leak into it. The pod resources server (above devices/) adapts the manager on its own side:
 * podresources/device-manager-devices.ts.
 */
import type { DevicePluginRegistrar } from '../pluginregistry/registrar';
import type { DeviceManager } from './device-manager';

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
