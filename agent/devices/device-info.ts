/**
 * The device manager's read side, for consumers that report devices rather than hand them out
 * (the pod resources server, metrics). Implemented by DeviceManager (./device-manager).
 */

/** One device a plugin advertises. */
export interface DeviceDescription {
  /** The plugin's device ID. */
  id: string;
  healthy: boolean;
  /** NUMA node IDs the device is attached to; empty when the plugin gives no topology. */
  numaNodes: number[];
}

/** Devices of one resource held by one container. */
export interface ContainerDevices {
  resourceName: string;
  deviceIds: string[];
  /** NUMA nodes those devices are attached to, ascending; empty when the plugin gave no topology. */
  numaNodes: number[];
}

/** A container that holds devices. */
export interface ContainerWithDevices {
  podUid: string;
  containerName: string;
  devices: ContainerDevices[];
}

/**
 * Contract: every method is synchronous, cheap (in-memory, no plugin calls) and returns fresh
 * copies the caller may keep or change. Results reflect allocations as of the call, including
 * those restored from the checkpoint at start.
 */
export interface DeviceInfo {
  /**
   * Per extended resource name, every device its plugin advertises (healthy and unhealthy), sorted
   * by ID. A resource whose plugin disconnected stays listed (all unhealthy) until its grace
   * period ends. Upstream's GetAllocatableResources reports only healthy ones: filter on `healthy`.
   */
  allocatable(): Map<string, DeviceDescription[]>;
  /** The devices one container holds, by resource (resources sorted, IDs sorted); [] when none. */
  devicesFor(podUid: string, containerName: string): ContainerDevices[];
  /** Every container holding at least one device, sorted by pod UID then container name. */
  containersWithDevices(): ContainerWithDevices[];
}
