/**
 * The pod resources v1 messages as the loader decodes them (proto field names; int64/uint64 as
 * decimal strings when read, numbers or strings accepted when written).
 */
export type Int64 = string | number;

export interface NUMANode {
  ID: Int64;
}

export interface TopologyInfo {
  nodes: NUMANode[];
}

export interface ContainerDevices {
  resource_name: string;
  device_ids: string[];
  topology?: TopologyInfo | null;
}

export interface ContainerMemory {
  memory_type: string;
  size: Int64;
  topology?: TopologyInfo | null;
}

export interface ContainerResources {
  name: string;
  devices: ContainerDevices[];
  cpu_ids: Int64[];
  memory: ContainerMemory[];
  dynamic_resources: unknown[];
}

export interface PodResources {
  name: string;
  namespace: string;
  containers: ContainerResources[];
}

export interface ListPodResourcesResponse {
  pod_resources: PodResources[];
}

export interface GetPodResourcesRequest {
  pod_name: string;
  pod_namespace: string;
}

export interface GetPodResourcesResponse {
  pod_resources: PodResources;
}

export interface AllocatableResourcesResponse {
  devices: ContainerDevices[];
  cpu_ids: Int64[];
  memory: ContainerMemory[];
}
