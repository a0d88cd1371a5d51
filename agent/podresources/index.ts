/** The pod resources v1 server (upstream PodResourcesLister) and the interfaces it consumes. */
export { PodResourcesServer, podResourcesSocketPath, POD_RESOURCES_DIR, POD_RESOURCES_SOCKET, RATE_LIMIT_MESSAGE, type PodResourcesServerOptions } from './pod-resources-server';
export { PodManagerPods, resourceContainers, type PodSource } from './pod-manager-pods';
export { podResourcesDevices } from './device-manager-devices';
export { noDevices, type DeviceSet, type DeviceTopology, type DevicesProvider, type PodResourcesPod, type PodsProvider } from './provider';
export { PodNotFoundError, PodResourcesService } from './pod-resources-service';
