import type { KObject } from '../api/types';
import { get, rec, recs, str, type JsonMap } from '../registry/obj-access';
import { parseQuantity } from '../registry/quantity';

/**
 * Resource amounts as the scheduler counts them (upstream framework.Resource): cpu in millicores,
 * every other resource (memory, ephemeral-storage, pods, hugepages-*, extended resources such as
 * vendor.example/gpu) in whole units. Quantities are rounded up, as upstream's MilliValue and Value.
 */
export type Resources = Record<string, number>;

export const CPU = 'cpu';
export const MEMORY = 'memory';
export const EPHEMERAL_STORAGE = 'ephemeral-storage';
export const PODS = 'pods';

/** Upstream schedutil DefaultMilliCPURequest and DefaultMemoryRequest: what a container without requests counts as when scoring. */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** A quantity (string or JSON number) as a scheduler amount of the named resource; 0 when absent or invalid. */
export function amount(resource: string, v: unknown): number {
  if (typeof v !== 'string' && typeof v !== 'number') return 0;
  const q = parseQuantity(v);
  if (!q) return 0;
  const exp = resource === CPU ? q.exp + 3 : q.exp;
  let units: bigint;
  if (exp >= 0) units = q.mantissa * 10n ** BigInt(exp);
  else {
    const div = 10n ** BigInt(-exp);
    units = q.mantissa / div;
    if (q.mantissa % div !== 0n && q.mantissa > 0n) units += 1n; // round up, as upstream
  }
  return Number(units);
}

/** A quantity map (requests, limits, allocatable, overhead) as scheduler amounts. */
export function resourceList(v: unknown): Resources {
  const out: Resources = {};
  for (const [k, q] of Object.entries(rec(v) ?? {})) out[k] = amount(k, q);
  return out;
}

function addInto(into: Resources, r: Resources): void {
  for (const [k, v] of Object.entries(r)) into[k] = (into[k] ?? 0) + v;
}

function maxInto(into: Resources, r: Resources): void {
  for (const [k, v] of Object.entries(r)) if (v > (into[k] ?? 0)) into[k] = v;
}

function containerRequests(c: JsonMap, nonZero: boolean): Resources {
  const r = resourceList(get(c, 'resources', 'requests'));
  if (nonZero) {
    // Upstream GetNonzeroRequests: a missing (or zero) cpu or memory request counts as the default.
    if (!r[CPU]) r[CPU] = DEFAULT_MILLI_CPU_REQUEST;
    if (!r[MEMORY]) r[MEMORY] = DEFAULT_MEMORY_REQUEST;
  }
  return r;
}

/**
 * What a pod asks of a node (upstream resourcehelper.PodRequests): the sum of its app containers
 * and restartable (sidecar) init containers, or the largest need during the init phase if that is
 * more (each ordinary init container runs alone, beside the sidecars started before it); plus
 * spec.overhead. Pod-level spec.resources.requests, where set, replace cpu and memory. With
 * nonZero, containers without cpu or memory requests count the scoring defaults (100m, 200Mi).
 */
export function podRequests(pod: KObject, nonZero = false): Resources {
  const spec = rec(pod.spec) ?? {};
  const reqs: Resources = {};
  for (const c of recs(spec.containers)) addInto(reqs, containerRequests(c, nonZero));
  const sidecars: Resources = {};
  const initPhase: Resources = {};
  for (const c of recs(spec.initContainers)) {
    const need = containerRequests(c, nonZero);
    if (str(c.restartPolicy) === 'Always') {
      addInto(reqs, need);
      addInto(sidecars, need);
      maxInto(initPhase, { ...sidecars });
    } else {
      const withSidecars = { ...need };
      addInto(withSidecars, sidecars);
      maxInto(initPhase, withSidecars);
    }
  }
  maxInto(reqs, initPhase);
  const podLevel = resourceList(get(spec, 'resources', 'requests'));
  for (const k of [CPU, MEMORY]) if (podLevel[k] !== undefined && podLevel[k] > 0) reqs[k] = podLevel[k];
  addInto(reqs, resourceList(spec.overhead));
  return reqs;
}

/** The node's allocatable resources (status.allocatable; capacity when allocatable is absent). */
export function nodeAllocatable(node: KObject): Resources {
  const status = rec(node.status) ?? {};
  return resourceList(rec(status.allocatable) ?? status.capacity);
}
