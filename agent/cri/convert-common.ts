/**
 * Conversions between the agent's CRI types and their wire shapes, for the small types every
 * message shares. Each type has `xToWire` (what we send) and `xFromWire` (what we receive); the
 * gRPC client uses one direction and the simulator's server the other, so round-trip tests cover
 * both. Decoding drops proto3 default values from optional fields, so a config survives the trip.
 */
import type {
  IdMapping,
  ImageSpec,
  LinuxContainerResources,
  Mount,
  MountPropagation,
  NamespaceMode,
  NamespaceOption,
  SecurityProfile,
  SecurityProfileType,
  SELinuxOption,
  StringMap,
} from './types';
import type {
  Opt,
  WIdMapping,
  WImageSpec,
  WInt64Value,
  WLinuxContainerResources,
  WLong,
  WMount,
  WNamespaceOption,
  WSecurityProfile,
  WSELinuxOption,
  WUInt64Value,
} from './wire-types';

const NS_PER_MS = 1_000_000n;

/** CRI nanosecond timestamp (decimal string or number) to integer ms; 0 for unset or garbage. */
export function nsToMs(v: WLong | undefined): number {
  if (v === undefined || v === '' || v === 0 || v === '0') return 0;
  try {
    return Number(BigInt(typeof v === 'number' ? Math.trunc(v) : v) / NS_PER_MS);
  } catch {
    return 0;
  }
}

/** Integer ms to a CRI nanosecond timestamp (exact, as a decimal string). */
export function msToNs(ms: number): string {
  if (!ms) return '0';
  return (BigInt(Math.round(ms)) * NS_PER_MS).toString();
}

/** int64/uint64 from the wire as a number (exact up to 2^53). */
export function num(v: WLong | undefined | null): number {
  if (v === undefined || v === null || v === '') return 0;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

export function str(v: string | undefined | null): string {
  return typeof v === 'string' ? v : '';
}

export function strs(v: string[] | undefined | null): string[] {
  return Array.isArray(v) ? v.slice() : [];
}

export function map(v: StringMap | undefined | null): StringMap {
  return v ? { ...v } : {};
}

/** Narrows a wire enum name to the union; unknown names (a newer runtime) become `fallback`. */
export function enumOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

/**
 * Removes keys whose value is a proto3 default ('', 0, false, empty list or map, undefined), so
 * decoded optional fields read as absent. Shallow: callers compact nested objects themselves.
 */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o) as Array<[string, unknown]>) {
    if (v === undefined || v === null || v === '' || v === 0 || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

/** Applies f to a present sub-message; undefined for null/undefined. */
export function opt<W, T>(v: Opt<W>, f: (w: W) => T): T | undefined {
  return v === null || v === undefined ? undefined : f(v);
}

export function int64ValueToWire(v: number | undefined): WInt64Value | undefined {
  return v === undefined ? undefined : { value: v };
}

export function int64ValueFromWire(v: Opt<WInt64Value>): number | undefined {
  return v === null || v === undefined ? undefined : num(v.value);
}

export function uint64ValueToWire(v: number | undefined): WUInt64Value | undefined {
  return v === undefined ? undefined : { value: v };
}

export const uint64ValueFromWire = int64ValueFromWire;

export const NAMESPACE_MODES: readonly NamespaceMode[] = ['POD', 'CONTAINER', 'NODE', 'TARGET'];
const PROPAGATIONS: readonly MountPropagation[] = [
  'PROPAGATION_PRIVATE',
  'PROPAGATION_HOST_TO_CONTAINER',
  'PROPAGATION_BIDIRECTIONAL',
];
const PROFILE_TYPES: readonly SecurityProfileType[] = ['RuntimeDefault', 'Unconfined', 'Localhost'];

export function imageSpecToWire(s: ImageSpec): WImageSpec {
  return {
    image: s.image,
    annotations: s.annotations,
    user_specified_image: s.userSpecifiedImage,
    runtime_handler: s.runtimeHandler,
    image_ref: s.imageRef,
  };
}

export function imageSpecFromWire(w: Opt<WImageSpec>): ImageSpec {
  if (!w) return { image: '' };
  return {
    image: str(w.image),
    ...compact({
      annotations: map(w.annotations),
      userSpecifiedImage: str(w.user_specified_image),
      runtimeHandler: str(w.runtime_handler),
      imageRef: str(w.image_ref),
    }),
  };
}

export function idMappingToWire(m: IdMapping): WIdMapping {
  return { host_id: m.hostId, container_id: m.containerId, length: m.length };
}

export function idMappingFromWire(w: WIdMapping): IdMapping {
  return { hostId: w.host_id ?? 0, containerId: w.container_id ?? 0, length: w.length ?? 0 };
}

export function mountToWire(m: Mount): WMount {
  return {
    container_path: m.containerPath,
    host_path: m.hostPath,
    readonly: m.readonly,
    selinux_relabel: m.selinuxRelabel,
    propagation: m.propagation,
    uidMappings: m.uidMappings?.map(idMappingToWire),
    gidMappings: m.gidMappings?.map(idMappingToWire),
    recursive_read_only: m.recursiveReadOnly,
    image: m.image ? imageSpecToWire(m.image) : undefined,
    image_sub_path: m.imageSubPath,
    mount_options: m.mountOptions,
  };
}

export function mountFromWire(w: WMount): Mount {
  const propagation = enumOf(w.propagation, PROPAGATIONS, 'PROPAGATION_PRIVATE');
  return {
    containerPath: str(w.container_path),
    hostPath: str(w.host_path),
    ...compact({
      readonly: w.readonly,
      selinuxRelabel: w.selinux_relabel,
      propagation: propagation === 'PROPAGATION_PRIVATE' ? undefined : propagation,
      uidMappings: (w.uidMappings ?? []).map(idMappingFromWire),
      gidMappings: (w.gidMappings ?? []).map(idMappingFromWire),
      recursiveReadOnly: w.recursive_read_only,
      image: opt(w.image, imageSpecFromWire),
      imageSubPath: str(w.image_sub_path),
      mountOptions: strs(w.mount_options),
    }),
  };
}

export function namespaceOptionToWire(n: NamespaceOption): WNamespaceOption {
  return {
    network: n.network,
    pid: n.pid,
    ipc: n.ipc,
    target_id: n.targetId,
    userns_options: n.usernsOptions
      ? {
          mode: n.usernsOptions.mode,
          uids: n.usernsOptions.uids?.map(idMappingToWire),
          gids: n.usernsOptions.gids?.map(idMappingToWire),
        }
      : undefined,
  };
}

/** POD is the proto default, so an absent mode decodes as absent (callers treat absent as POD). */
export function namespaceOptionFromWire(w: WNamespaceOption): NamespaceOption {
  const mode = (v: unknown) => {
    const m = enumOf(v, NAMESPACE_MODES, 'POD');
    return m === 'POD' ? undefined : m;
  };
  return compact({
    network: mode(w.network),
    pid: mode(w.pid),
    ipc: mode(w.ipc),
    targetId: str(w.target_id),
    usernsOptions: opt(w.userns_options, (u) => ({
      mode: enumOf(u.mode, NAMESPACE_MODES, 'POD'),
      ...compact({ uids: (u.uids ?? []).map(idMappingFromWire), gids: (u.gids ?? []).map(idMappingFromWire) }),
    })),
  });
}

export function securityProfileToWire(p: SecurityProfile): WSecurityProfile {
  return { profile_type: p.profileType, localhost_ref: p.localhostRef };
}

export function securityProfileFromWire(w: WSecurityProfile): SecurityProfile {
  return {
    profileType: enumOf(w.profile_type, PROFILE_TYPES, 'RuntimeDefault'),
    ...compact({ localhostRef: str(w.localhost_ref) }),
  };
}

export function seLinuxToWire(s: SELinuxOption): WSELinuxOption {
  return { user: s.user, role: s.role, type: s.type, level: s.level };
}

export function seLinuxFromWire(w: WSELinuxOption): SELinuxOption {
  return compact({ user: str(w.user), role: str(w.role), type: str(w.type), level: str(w.level) });
}

export function resourcesToWire(r: LinuxContainerResources): WLinuxContainerResources {
  return {
    cpu_period: r.cpuPeriod,
    cpu_quota: r.cpuQuota,
    cpu_shares: r.cpuShares,
    memory_limit_in_bytes: r.memoryLimitInBytes,
    oom_score_adj: r.oomScoreAdj,
    cpuset_cpus: r.cpusetCpus,
    cpuset_mems: r.cpusetMems,
    hugepage_limits: r.hugepageLimits?.map((h) => ({ page_size: h.pageSize, limit: h.limit })),
    unified: r.unified,
    memory_swap_limit_in_bytes: r.memorySwapLimitInBytes,
  };
}

export function resourcesFromWire(w: WLinuxContainerResources): LinuxContainerResources {
  return compact({
    cpuPeriod: num(w.cpu_period),
    cpuQuota: num(w.cpu_quota),
    cpuShares: num(w.cpu_shares),
    memoryLimitInBytes: num(w.memory_limit_in_bytes),
    oomScoreAdj: num(w.oom_score_adj),
    cpusetCpus: str(w.cpuset_cpus),
    cpusetMems: str(w.cpuset_mems),
    hugepageLimits: (w.hugepage_limits ?? []).map((h) => ({ pageSize: str(h.page_size), limit: num(h.limit) })),
    unified: map(w.unified),
    memorySwapLimitInBytes: num(w.memory_swap_limit_in_bytes),
  });
}

/**
 * Compacts a decoded security context but keeps run_as_user/run_as_group whenever their wrapper
 * was sent: 0 there means "run as root", not "unset".
 */
export function withIds<T extends { runAsUser?: number; runAsGroup?: number }>(
  w: { run_as_user?: Opt<WInt64Value>; run_as_group?: Opt<WInt64Value> },
  rest: T,
): T {
  const out = compact(rest);
  const user = int64ValueFromWire(w.run_as_user);
  const group = int64ValueFromWire(w.run_as_group);
  if (user !== undefined) out.runAsUser = user;
  if (group !== undefined) out.runAsGroup = group;
  return out;
}
