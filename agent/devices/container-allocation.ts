/**
 * What a plugin's Allocate answered for one container, in the agent's own shape: the pieces the
 * runtime's CreateContainer gets (environment, mounts, device nodes, annotations, CDI devices).
 * Stored in the checkpoint so that a container re-created after an agent restart gets the same
 * answer without asking the plugin again (as upstream, which stores the Allocate response).
 */
import type { WContainerAllocateResponse } from './wire';

export interface DeviceMount {
  containerPath: string;
  hostPath: string;
  readOnly: boolean;
}

export interface DeviceNode {
  containerPath: string;
  hostPath: string;
  /** Subset of "rwm". */
  permissions: string;
}

export interface ContainerAllocation {
  envs: Record<string, string>;
  mounts: DeviceMount[];
  devices: DeviceNode[];
  annotations: Record<string, string>;
  /** Fully qualified CDI device names (vendor.com/class=name). */
  cdiDevices: string[];
}

/**
 * CRI container label holding the device IDs a container got, as JSON {resource: [ids]}. Labels
 * stay in the runtime's metadata (not in the OCI spec), so the device manager can rebuild its
 * allocations from the runtime when its checkpoint is lost. svc's own; upstream has no such label.
 */
export const DEVICE_IDS_LABEL = 'svc.io/device-ids';

/** What a container's devices add to its CreateContainer, and which devices those are. */
export interface DeviceRunOptions {
  allocation: ContainerAllocation;
  /** Resource name -> device IDs (sorted). */
  deviceIds: Record<string, string[]>;
}

export function emptyAllocation(): ContainerAllocation {
  return { envs: {}, mounts: [], devices: [], annotations: {}, cdiDevices: [] };
}

export function allocationFromWire(w: WContainerAllocateResponse | undefined): ContainerAllocation {
  if (!w) return emptyAllocation();
  return {
    envs: { ...(w.envs ?? {}) },
    mounts: (w.mounts ?? []).map((m) => ({ containerPath: m.container_path, hostPath: m.host_path, readOnly: m.read_only === true })),
    devices: (w.devices ?? []).map((d) => ({ containerPath: d.container_path, hostPath: d.host_path, permissions: d.permissions || 'rwm' })),
    annotations: { ...(w.annotations ?? {}) },
    cdiDevices: (w.cdi_devices ?? []).map((c) => c.name).filter((n) => n !== ''),
  };
}

/**
 * Several resources' answers for one container merged into one, as upstream's
 * GetDeviceRunContainerOptions: envs and annotations by key (a later resource wins, logged by the
 * caller), mounts by container path and devices by container path first come first kept, CDI
 * devices de-duplicated.
 */
export function mergeAllocations(parts: readonly ContainerAllocation[]): { merged: ContainerAllocation; conflicts: string[] } {
  const merged = emptyAllocation();
  const conflicts: string[] = [];
  const mountPaths = new Set<string>();
  const devicePaths = new Set<string>();
  const cdi = new Set<string>();
  for (const p of parts) {
    for (const [k, v] of Object.entries(p.envs)) {
      if (k in merged.envs && merged.envs[k] !== v) conflicts.push(`env ${k}`);
      merged.envs[k] = v;
    }
    for (const [k, v] of Object.entries(p.annotations)) {
      if (k in merged.annotations && merged.annotations[k] !== v) conflicts.push(`annotation ${k}`);
      merged.annotations[k] = v;
    }
    for (const m of p.mounts) {
      if (mountPaths.has(m.containerPath)) continue;
      mountPaths.add(m.containerPath);
      merged.mounts.push({ ...m });
    }
    for (const d of p.devices) {
      if (devicePaths.has(d.containerPath)) continue;
      devicePaths.add(d.containerPath);
      merged.devices.push({ ...d });
    }
    for (const c of p.cdiDevices) {
      if (cdi.has(c)) continue;
      cdi.add(c);
      merged.cdiDevices.push(c);
    }
  }
  return { merged, conflicts };
}
