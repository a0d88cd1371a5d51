/**
 * What the pod resources server reads, defined here at the consumer. Both are synchronous and
 * must be cheap: List calls them once per pod and container on every request (upstream's
 * PodsProvider and DevicesProvider likewise answer from memory).
 */

/** NUMA placement as the device plugin API v1beta1 reports it (TopologyInfo / NUMANode). */
export interface DeviceTopology {
  nodes: readonly { ID: number | string }[];
}

/** Device IDs of one extended resource, all with the same NUMA placement (or none reported). */
export interface DeviceSet {
  /** Extended resource name, e.g. "example.com/foo". */
  resourceName: string;
  deviceIds: readonly string[];
  topology?: DeviceTopology;
}

/** A pod as the pod resources API shows it. */
export interface PodResourcesPod {
  namespace: string;
  name: string;
  uid: string;
  /**
   * Containers that can hold resources, in upstream's order: restartable init containers
   * (sidecars) first, then app containers. Ordinary init containers are left out, as upstream.
   */
  containers: readonly string[];
}

/** The agent's pods. */
export interface PodsProvider {
  /** The pods admitted to this node that are not yet terminated (upstream GetActivePods). Never throws. */
  activePods(): readonly PodResourcesPod[];
  /** The pod the agent runs under namespace/name (active or terminating), or undefined. Never throws. */
  podByName(namespace: string, name: string): PodResourcesPod | undefined;
}

/** The device manager, as the pod resources server sees it. */
export interface DevicesProvider {
  /**
   * Every device the node can allocate (healthy ones; upstream GetAllocatableDevices): one entry
   * per device is best, so that each carries its own topology, but entries may group devices that
   * share one. Never throws.
   */
  allocatable(): readonly DeviceSet[];
  /** The devices allocated to one container of a pod, grouped by resource; [] when none. Never throws. */
  devicesFor(podUid: string, containerName: string): readonly DeviceSet[];
}

/** A devices provider with no devices (tests of the pods side). */
export const noDevices: DevicesProvider = {
  allocatable: () => [],
  devicesFor: () => [],
};
