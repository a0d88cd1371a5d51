/** Wire conversions for Version, Status, images, stats and events (see convert-common). */
import {
  compact,
  enumOf,
  imageSpecFromWire,
  imageSpecToWire,
  int64ValueFromWire,
  int64ValueToWire,
  map,
  msToNs,
  nsToMs,
  num,
  opt,
  str,
  strs,
  uint64ValueFromWire,
  uint64ValueToWire,
} from './convert-common';
import { containerMetadataFromWire, containerMetadataToWire, containerStatusFromWire, containerStatusToWire } from './convert-container-status';
import { sandboxStatusFromWire, sandboxStatusToWire } from './convert-sandbox';
import type {
  AuthConfig,
  ContainerEvent,
  ContainerEventType,
  ContainerStats,
  ContainerStatsFilter,
  FilesystemUsage,
  Image,
  ImageFsInfo,
  RuntimeStatus,
  VersionInfo,
} from './types';
import type {
  Opt,
  WAuthConfig,
  WContainerEventResponse,
  WContainerStats,
  WContainerStatsFilter,
  WFilesystemUsage,
  WImage,
  WImageFsInfoResponse,
  WStatusResponse,
  WVersionResponse,
} from './wire-types';

export function versionToWire(v: VersionInfo): WVersionResponse {
  return {
    version: v.version,
    runtime_name: v.runtimeName,
    runtime_version: v.runtimeVersion,
    runtime_api_version: v.runtimeApiVersion,
  };
}

export function versionFromWire(w: WVersionResponse): VersionInfo {
  return {
    version: str(w.version),
    runtimeName: str(w.runtime_name),
    runtimeVersion: str(w.runtime_version),
    runtimeApiVersion: str(w.runtime_api_version),
  };
}

export function statusToWire(s: RuntimeStatus): WStatusResponse {
  return {
    status: { conditions: s.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })) },
    info: s.info,
    runtime_handlers: s.handlers.map((h) => ({
      name: h.name,
      features: { recursive_read_only_mounts: h.recursiveReadOnlyMounts, user_namespaces: h.userNamespaces },
    })),
    features: {
      supplemental_groups_policy: s.features.supplementalGroupsPolicy,
      user_namespaces_host_network: s.features.userNamespacesHostNetwork,
      mount_options: s.features.mountOptions,
    },
  };
}

export function statusFromWire(w: WStatusResponse): RuntimeStatus {
  return {
    conditions: (w.status?.conditions ?? []).map((c) => ({
      type: str(c.type),
      status: c.status === true,
      reason: str(c.reason),
      message: str(c.message),
    })),
    info: map(w.info),
    handlers: (w.runtime_handlers ?? []).map((h) => ({
      name: str(h.name),
      recursiveReadOnlyMounts: h.features?.recursive_read_only_mounts === true,
      userNamespaces: h.features?.user_namespaces === true,
    })),
    features: {
      supplementalGroupsPolicy: w.features?.supplemental_groups_policy === true,
      userNamespacesHostNetwork: w.features?.user_namespaces_host_network === true,
      mountOptions: w.features?.mount_options === true,
    },
  };
}

export function imageToWire(i: Image): WImage {
  return {
    id: i.id,
    repo_tags: i.repoTags,
    repo_digests: i.repoDigests,
    size: i.size,
    uid: int64ValueToWire(i.uid),
    username: i.username,
    spec: i.spec ? imageSpecToWire(i.spec) : undefined,
    pinned: i.pinned,
  };
}

export function imageFromWire(w: WImage): Image {
  const image: Image = {
    id: str(w.id),
    repoTags: strs(w.repo_tags),
    repoDigests: strs(w.repo_digests),
    size: num(w.size),
    username: str(w.username),
    pinned: w.pinned === true,
  };
  const uid = int64ValueFromWire(w.uid);
  if (uid !== undefined) image.uid = uid;
  const spec = opt(w.spec, imageSpecFromWire);
  if (spec) image.spec = spec;
  return image;
}

export function authToWire(a: AuthConfig): WAuthConfig {
  return {
    username: a.username,
    password: a.password,
    auth: a.auth,
    server_address: a.serverAddress,
    identity_token: a.identityToken,
    registry_token: a.registryToken,
  };
}

export function authFromWire(w: Opt<WAuthConfig>): AuthConfig | undefined {
  if (!w) return undefined;
  return compact({
    username: str(w.username),
    password: str(w.password),
    auth: str(w.auth),
    serverAddress: str(w.server_address),
    identityToken: str(w.identity_token),
    registryToken: str(w.registry_token),
  });
}

export function fsUsageToWire(f: FilesystemUsage): WFilesystemUsage {
  return {
    timestamp: msToNs(f.timestamp),
    fs_id: { mountpoint: f.mountpoint },
    used_bytes: uint64ValueToWire(f.usedBytes),
    inodes_used: uint64ValueToWire(f.inodesUsed),
  };
}

export function fsUsageFromWire(w: WFilesystemUsage): FilesystemUsage {
  const f: FilesystemUsage = { timestamp: nsToMs(w.timestamp), mountpoint: str(w.fs_id?.mountpoint) };
  const used = uint64ValueFromWire(w.used_bytes);
  if (used !== undefined) f.usedBytes = used;
  const inodes = uint64ValueFromWire(w.inodes_used);
  if (inodes !== undefined) f.inodesUsed = inodes;
  return f;
}

export function imageFsInfoToWire(i: ImageFsInfo): WImageFsInfoResponse {
  return {
    image_filesystems: i.imageFilesystems.map(fsUsageToWire),
    container_filesystems: i.containerFilesystems.map(fsUsageToWire),
  };
}

export function imageFsInfoFromWire(w: WImageFsInfoResponse): ImageFsInfo {
  return {
    imageFilesystems: (w.image_filesystems ?? []).map(fsUsageFromWire),
    containerFilesystems: (w.container_filesystems ?? []).map(fsUsageFromWire),
  };
}

/** Keeps only the UInt64Value fields that were set (absent wrappers mean "not reported"). */
function definedOnly<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function statsToWire(s: ContainerStats): WContainerStats {
  return {
    attributes: { id: s.id, metadata: containerMetadataToWire(s.metadata), labels: s.labels, annotations: s.annotations },
    cpu: s.cpu
      ? {
          timestamp: msToNs(s.cpu.timestamp),
          usage_core_nano_seconds: uint64ValueToWire(s.cpu.usageCoreNanoSeconds),
          usage_nano_cores: uint64ValueToWire(s.cpu.usageNanoCores),
        }
      : undefined,
    memory: s.memory
      ? {
          timestamp: msToNs(s.memory.timestamp),
          working_set_bytes: uint64ValueToWire(s.memory.workingSetBytes),
          available_bytes: uint64ValueToWire(s.memory.availableBytes),
          usage_bytes: uint64ValueToWire(s.memory.usageBytes),
          rss_bytes: uint64ValueToWire(s.memory.rssBytes),
          page_faults: uint64ValueToWire(s.memory.pageFaults),
          major_page_faults: uint64ValueToWire(s.memory.majorPageFaults),
        }
      : undefined,
    writable_layer: s.writableLayer ? fsUsageToWire(s.writableLayer) : undefined,
    swap: s.swap
      ? {
          timestamp: msToNs(s.swap.timestamp),
          swap_available_bytes: uint64ValueToWire(s.swap.swapAvailableBytes),
          swap_usage_bytes: uint64ValueToWire(s.swap.swapUsageBytes),
        }
      : undefined,
  };
}

export function statsFromWire(w: WContainerStats): ContainerStats {
  const a = w.attributes;
  const s: ContainerStats = {
    id: str(a?.id),
    metadata: containerMetadataFromWire(a?.metadata),
    labels: map(a?.labels),
    annotations: map(a?.annotations),
  };
  const cpu = w.cpu;
  if (cpu) {
    s.cpu = definedOnly({
      timestamp: nsToMs(cpu.timestamp),
      usageCoreNanoSeconds: uint64ValueFromWire(cpu.usage_core_nano_seconds),
      usageNanoCores: uint64ValueFromWire(cpu.usage_nano_cores),
    });
  }
  const m = w.memory;
  if (m) {
    s.memory = definedOnly({
      timestamp: nsToMs(m.timestamp),
      workingSetBytes: uint64ValueFromWire(m.working_set_bytes),
      availableBytes: uint64ValueFromWire(m.available_bytes),
      usageBytes: uint64ValueFromWire(m.usage_bytes),
      rssBytes: uint64ValueFromWire(m.rss_bytes),
      pageFaults: uint64ValueFromWire(m.page_faults),
      majorPageFaults: uint64ValueFromWire(m.major_page_faults),
    });
  }
  if (w.writable_layer) s.writableLayer = fsUsageFromWire(w.writable_layer);
  const sw = w.swap;
  if (sw) {
    s.swap = definedOnly({
      timestamp: nsToMs(sw.timestamp),
      swapAvailableBytes: uint64ValueFromWire(sw.swap_available_bytes),
      swapUsageBytes: uint64ValueFromWire(sw.swap_usage_bytes),
    });
  }
  return s;
}

export function statsFilterToWire(f: ContainerStatsFilter): WContainerStatsFilter {
  return { id: f.id, pod_sandbox_id: f.podSandboxId, label_selector: f.labelSelector };
}

export function statsFilterFromWire(w: Opt<WContainerStatsFilter>): ContainerStatsFilter {
  if (!w) return {};
  return compact({ id: str(w.id), podSandboxId: str(w.pod_sandbox_id), labelSelector: map(w.label_selector) });
}

const EVENT_TYPES: readonly ContainerEventType[] = [
  'CONTAINER_CREATED_EVENT',
  'CONTAINER_STARTED_EVENT',
  'CONTAINER_STOPPED_EVENT',
  'CONTAINER_DELETED_EVENT',
];

export function eventToWire(e: ContainerEvent): WContainerEventResponse {
  return {
    container_id: e.containerId,
    container_event_type: e.type,
    created_at: msToNs(e.createdAt),
    pod_sandbox_status: e.podSandboxStatus ? sandboxStatusToWire(e.podSandboxStatus) : undefined,
    containers_statuses: e.containersStatuses.map(containerStatusToWire),
  };
}

export function eventFromWire(w: WContainerEventResponse): ContainerEvent {
  const e: ContainerEvent = {
    containerId: str(w.container_id),
    type: enumOf(w.container_event_type, EVENT_TYPES, 'CONTAINER_CREATED_EVENT'),
    createdAt: nsToMs(w.created_at),
    containersStatuses: (w.containers_statuses ?? []).map(containerStatusFromWire),
  };
  if (w.pod_sandbox_status) e.podSandboxStatus = sandboxStatusFromWire(w.pod_sandbox_status);
  return e;
}
