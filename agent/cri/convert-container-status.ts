/** Wire conversions for ContainerStatus, shared by ContainerStatus, PodSandboxStatus and events. */
import {
  enumOf,
  imageSpecFromWire,
  imageSpecToWire,
  map,
  mountFromWire,
  mountToWire,
  msToNs,
  nsToMs,
  num,
  opt,
  resourcesFromWire,
  resourcesToWire,
  str,
} from './convert-common';
import type { ContainerMetadata, ContainerState, ContainerStatus } from './types';
import type { Opt, WContainerMetadata, WContainerStatus } from './wire-types';

export const CONTAINER_STATES: readonly ContainerState[] = [
  'CONTAINER_CREATED',
  'CONTAINER_RUNNING',
  'CONTAINER_EXITED',
  'CONTAINER_UNKNOWN',
];

export function containerMetadataToWire(m: ContainerMetadata): WContainerMetadata {
  return { name: m.name, attempt: m.attempt };
}

export function containerMetadataFromWire(w: Opt<WContainerMetadata>): ContainerMetadata {
  return { name: str(w?.name), attempt: w?.attempt ?? 0 };
}

/** Signal names pass through as strings; unknown or absent means the runtime default. */
export function stopSignalFromWire(v: unknown): string {
  return typeof v === 'string' && v.startsWith('SIGNAL_') ? v : 'SIGNAL_RUNTIME_DEFAULT';
}

export function containerStatusToWire(s: ContainerStatus): WContainerStatus {
  return {
    id: s.id,
    metadata: containerMetadataToWire(s.metadata),
    state: s.state,
    created_at: msToNs(s.createdAt),
    started_at: msToNs(s.startedAt),
    finished_at: msToNs(s.finishedAt),
    exit_code: s.exitCode,
    image: imageSpecToWire(s.image),
    image_ref: s.imageRef,
    reason: s.reason,
    message: s.message,
    labels: s.labels,
    annotations: s.annotations,
    mounts: s.mounts.map(mountToWire),
    log_path: s.logPath,
    resources: s.resources ? { linux: resourcesToWire(s.resources) } : undefined,
    image_id: s.imageId,
    user: s.user
      ? { linux: { uid: s.user.uid, gid: s.user.gid, supplemental_groups: s.user.supplementalGroups } }
      : undefined,
    stop_signal: s.stopSignal,
  };
}

export function containerStatusFromWire(w: Opt<WContainerStatus>): ContainerStatus {
  const status: ContainerStatus = {
    id: str(w?.id),
    metadata: containerMetadataFromWire(w?.metadata),
    state: enumOf(w?.state, CONTAINER_STATES, 'CONTAINER_UNKNOWN'),
    createdAt: nsToMs(w?.created_at),
    startedAt: nsToMs(w?.started_at),
    finishedAt: nsToMs(w?.finished_at),
    exitCode: w?.exit_code ?? 0,
    image: imageSpecFromWire(w?.image),
    imageRef: str(w?.image_ref),
    imageId: str(w?.image_id),
    reason: str(w?.reason),
    message: str(w?.message),
    labels: map(w?.labels),
    annotations: map(w?.annotations),
    mounts: (w?.mounts ?? []).map(mountFromWire),
    logPath: str(w?.log_path),
    stopSignal: stopSignalFromWire(w?.stop_signal),
  };
  const resources = opt(w?.resources?.linux, resourcesFromWire);
  if (resources) status.resources = resources;
  const user = w?.user?.linux;
  if (user) {
    status.user = { uid: num(user.uid), gid: num(user.gid), supplementalGroups: (user.supplemental_groups ?? []).map(num) };
  }
  return status;
}
