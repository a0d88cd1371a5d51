/**
 * The Node status the agent reports, and the rules for comparing and posting it. As the kubelet's
 * nodeStatusHasChanged: heartbeat times never count as a change; lastTransitionTime moves only
 * when a condition's status changes; lastHeartbeatTime is the time of posting.
 */
import { isObject } from '../../apiserver/api/types';
import type { NodeAddress } from './addresses';
import type { ResourceList } from './node-resources';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  /** Deprecated upstream and always empty here (there is no kube-proxy), but present: clients such as the Python one require the field. */
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

/** What the agent computes every nodeStatusUpdateFrequency; conditions carry no times yet. */
export interface DesiredNodeStatus {
  addresses: NodeAddress[];
  capacity: ResourceList;
  allocatable: ResourceList;
  conditions: NodeCondition[];
  nodeInfo: NodeSystemInfo;
  declaredFeatures: string[];
  /** Where the agent's HTTPS server listens (the API server proxies pods/log there). */
  daemonEndpoints: { kubeletEndpoint: { Port: number } };
}

/** The condition types the agent owns; others (NetworkUnavailable, set by network plugins) are left alone. */
export const ownedConditionTypes = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'] as const;

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** Deep equality of JSON values, key order ignored. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function conditionsOf(status: unknown): NodeCondition[] {
  const list = isObject(status) ? status['conditions'] : undefined;
  return Array.isArray(list) ? (list.filter(isObject) as unknown as NodeCondition[]) : [];
}

/** The server's condition of a type, if any. */
export function findCondition(status: unknown, type: string): NodeCondition | undefined {
  return conditionsOf(status).find((c) => c.type === type);
}

/** Which top-level status fields differ between the server's status and the desired one (conditions compared without times). */
export function changedFields(current: unknown, desired: DesiredNodeStatus): Set<keyof DesiredNodeStatus> {
  const cur = isObject(current) ? current : {};
  const out = new Set<keyof DesiredNodeStatus>();
  for (const f of ['addresses', 'capacity', 'allocatable', 'nodeInfo', 'daemonEndpoints'] as const) {
    if (!sameJson(cur[f], desired[f])) out.add(f);
  }
  if (!sameJson(cur['declaredFeatures'] ?? [], desired.declaredFeatures)) out.add('declaredFeatures');
  for (const d of desired.conditions) {
    const c = findCondition(cur, d.type);
    if (!c || c.status !== d.status || (c.reason ?? '') !== (d.reason ?? '') || (c.message ?? '') !== (d.message ?? '')) {
      out.add('conditions');
      break;
    }
  }
  return out;
}

/** Stamps the desired conditions with times: heartbeat now, transition kept unless the status changed. */
export function stampConditions(current: unknown, desired: readonly NodeCondition[], nowIso: string): NodeCondition[] {
  return desired.map((d) => {
    const c = findCondition(current, d.type);
    const transition = c && c.status === d.status && c.lastTransitionTime ? c.lastTransitionTime : nowIso;
    return { ...d, lastHeartbeatTime: nowIso, lastTransitionTime: transition };
  });
}

/** Map keys present on the server but no longer desired are removed with null (RFC 7386 / strategic merge). */
function mapPatch(current: unknown, desired: Record<string, string>): Record<string, string | null> {
  const out: Record<string, string | null> = { ...desired };
  if (isObject(current)) for (const k of Object.keys(current)) if (!(k in desired)) out[k] = null;
  return out;
}

/**
 * The strategic-merge patch body for nodes/{name}/status: every owned condition (they merge by
 * type, so conditions owned by others survive), plus each other field only when it changed.
 * Addresses are replaced whole ($patch: replace) because their merge key (type) is not unique
 * when a node has two InternalIPs, the upstream bug the kubelet also works around.
 */
export function statusPatch(current: unknown, desired: DesiredNodeStatus, nowIso: string, changed = changedFields(current, desired)): { status: Record<string, unknown> } {
  const cur = isObject(current) ? current : {};
  const status: Record<string, unknown> = { conditions: stampConditions(current, desired.conditions, nowIso) };
  if (changed.has('addresses')) status['addresses'] = [{ $patch: 'replace' }, ...desired.addresses];
  if (changed.has('capacity')) status['capacity'] = mapPatch(cur['capacity'], desired.capacity);
  if (changed.has('allocatable')) status['allocatable'] = mapPatch(cur['allocatable'], desired.allocatable);
  if (changed.has('nodeInfo')) status['nodeInfo'] = desired.nodeInfo;
  if (changed.has('declaredFeatures')) status['declaredFeatures'] = desired.declaredFeatures;
  if (changed.has('daemonEndpoints')) status['daemonEndpoints'] = desired.daemonEndpoints;
  return { status };
}

/** A full status for a Node being created (all times now). */
export function initialStatus(desired: DesiredNodeStatus, nowIso: string): Record<string, unknown> {
  return {
    addresses: desired.addresses,
    capacity: desired.capacity,
    allocatable: desired.allocatable,
    conditions: stampConditions(undefined, desired.conditions, nowIso),
    nodeInfo: desired.nodeInfo,
    declaredFeatures: desired.declaredFeatures,
    daemonEndpoints: desired.daemonEndpoints,
  };
}

/** RFC 3339 with second precision, as metav1.Time is serialized. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339 with microseconds, as metav1.MicroTime (Lease renewTime) is serialized. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
