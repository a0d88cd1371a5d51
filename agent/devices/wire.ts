/**
 * The device plugin v1beta1 messages as @grpc/proto-loader delivers them with our loader options
 * (proto field names, defaults filled, int64 as strings). Only the shapes the agent reads or
 * writes; field names are the proto's.
 */

export interface WDevicePluginOptions {
  pre_start_required: boolean;
  get_preferred_allocation_available: boolean;
}

export interface WRegisterRequest {
  version: string;
  endpoint: string;
  resource_name: string;
  options: WDevicePluginOptions | null;
}

export interface WDevice {
  ID: string;
  health: string;
  topology: { nodes: { ID: string | number }[] } | null;
}

export interface WListAndWatchResponse {
  devices: WDevice[];
}

export interface WContainerPreferredAllocationRequest {
  available_deviceIDs: string[];
  must_include_deviceIDs: string[];
  allocation_size: number;
}

export interface WPreferredAllocationRequest {
  container_requests: WContainerPreferredAllocationRequest[];
}

export interface WPreferredAllocationResponse {
  container_responses: { deviceIDs: string[] }[];
}

export interface WAllocateRequest {
  container_requests: { devices_ids: string[] }[];
}

export interface WMount {
  container_path: string;
  host_path: string;
  read_only: boolean;
}

export interface WDeviceSpec {
  container_path: string;
  host_path: string;
  permissions: string;
}

export interface WContainerAllocateResponse {
  envs: Record<string, string>;
  mounts: WMount[];
  devices: WDeviceSpec[];
  annotations: Record<string, string>;
  cdi_devices: { name: string }[];
}

export interface WAllocateResponse {
  container_responses: WContainerAllocateResponse[];
}

export interface WPreStartContainerRequest {
  devices_ids: string[];
}

/** Device.health values (upstream constants). */
export const HEALTHY = 'Healthy';
export const UNHEALTHY = 'Unhealthy';
