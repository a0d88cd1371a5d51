import type { KObject } from '../../api/types';
import { get, rec, recs, str, type JsonMap } from '../obj-access';
import { compareQuantities } from '../quantity';
import { add, addQuantities, parseResourceList, quantity, type ResourceList } from './resource-list';

/**
 * What a pod counts against quota (upstream pkg/quota/v1/evaluator/core/pods.go): its requests
 * and limits as upstream's resourcehelper.PodRequests/PodLimits sum them, under the quota names
 * (cpu and requests.cpu, limits.cpu, ..., hugepages, requests.<extended resource>), and its
 * quota scopes.
 */

/** The compute resources quota knows by name (upstream podResources). */
export const POD_RESOURCES: readonly string[] = [
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
];

/** Upstream IsNativeResource: no domain, or a kubernetes.io one. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** Upstream IsExtendedResourceName: a domain-qualified name outside kubernetes.io, not itself a quota requests.* name. */
export function isExtendedResource(name: string): boolean {
  return !isNativeResource(name) && !name.startsWith('requests.');
}

/** Names a quota may list that pods count (upstream podEvaluator.MatchingResources). */
export function podMatchingResources(names: readonly string[]): string[] {
  return names.filter((n) => POD_RESOURCES.includes(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || (!isNativeResource(n) && n.startsWith('requests.')));
}

function maxInto(into: ResourceList, r: ResourceList): void {
  for (const [k, q] of Object.entries(r)) if (!into[k] || compareQuantities(q, into[k]) > 0) into[k] = q;
}

/**
 * Upstream PodRequests / PodLimits: app and sidecar containers summed, or the init phase's need
 * when larger; overhead added (to limits only where a limit is set) unless withOverhead is false
 * (LimitRanger judges the containers only).
 */
export function podResources(pod: KObject, which: 'requests' | 'limits', withOverhead = true): ResourceList {
  const spec = rec(pod.spec) ?? {};
  const of = (c: JsonMap) => parseResourceList(get(c, 'resources', which));
  let total: ResourceList = {};
  for (const c of recs(spec.containers)) total = add(total, of(c));
  let sidecars: ResourceList = {};
  const initPhase: ResourceList = {};
  for (const c of recs(spec.initContainers)) {
    const need = of(c);
    if (str(c.restartPolicy) === 'Always') {
      total = add(total, need);
      sidecars = add(sidecars, need);
      maxInto(initPhase, sidecars);
    } else {
      maxInto(initPhase, add(need, sidecars));
    }
  }
  maxInto(total, initPhase);
  const overhead = withOverhead ? parseResourceList(spec.overhead) : {};
  if (which === 'requests') return add(total, overhead);
  for (const [k, q] of Object.entries(overhead)) if (total[k]) total[k] = addQuantities(total[k], q);
  return total;
}

/** Upstream QuotaV1Pod: terminal pods, and pods past their deletion grace period, no longer count compute resources. */
export function podCountsCompute(pod: KObject, nowMs: number): boolean {
  const phase = get(pod, 'status', 'phase');
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const del = pod.metadata.deletionTimestamp;
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (del && grace !== undefined && nowMs > Date.parse(del) + grace * 1000) return false;
  return true;
}

/** Upstream PodUsageFunc: count/pods always; pods and compute resources while the pod counts them. */
export function podUsage(pod: KObject, nowMs: number): ResourceList {
  const out: ResourceList = { 'count/pods': quantity(1) };
  if (!podCountsCompute(pod, nowMs)) return out;
  out.pods = quantity(1);
  const requests = podResources(pod, 'requests');
  const limits = podResources(pod, 'limits');
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    if (requests[r]) {
      out[r] = requests[r];
      out[`requests.${r}`] = requests[r];
    }
    if (limits[r]) out[`limits.${r}`] = limits[r];
  }
  for (const [r, q] of Object.entries(requests)) {
    if (r.startsWith('hugepages-')) {
      out[r] = q;
      out[`requests.${r}`] = q;
    }
    // Extended resources cannot be overcommitted: quota counts them as requests.<name> only.
    if (isExtendedResource(r)) out[`requests.${r}`] = q;
  }
  return out;
}

/** Upstream GetPodQOS == BestEffort: no container asks for or limits cpu or memory (zero amounts do not count). */
export function isBestEffort(pod: KObject): boolean {
  const spec = rec(pod.spec) ?? {};
  for (const c of [...recs(spec.containers), ...recs(spec.initContainers)]) {
    for (const which of ['requests', 'limits']) {
      const l = parseResourceList(get(c, 'resources', which));
      if ((l.cpu && l.cpu.mantissa !== 0n) || (l.memory && l.memory.mantissa !== 0n)) return false;
    }
  }
  return true;
}

/** Upstream isTerminating: spec.activeDeadlineSeconds set (≥ 0). */
export function isTerminating(pod: KObject): boolean {
  const s = get(pod, 'spec', 'activeDeadlineSeconds');
  return typeof s === 'number' && s >= 0;
}

/** Upstream usesCrossNamespacePodAffinity: an affinity term naming namespaces or a namespace selector. */
export function usesCrossNamespacePodAffinity(pod: KObject): boolean {
  const affinity = rec(get(pod, 'spec', 'affinity')) ?? {};
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = rec(affinity[kind]) ?? {};
    const terms = [...recs(a.requiredDuringSchedulingIgnoredDuringExecution), ...recs(a.preferredDuringSchedulingIgnoredDuringExecution).map((w) => rec(w.podAffinityTerm) ?? {})];
    if (terms.some((t) => (Array.isArray(t.namespaces) && t.namespaces.length > 0) || rec(t.namespaceSelector) !== undefined)) return true;
  }
  return false;
}

/** Which containers lack a request (cpu, memory, requests.*) or a limit (limits.*) a quota requires (upstream enforcePodContainerConstraints). */
export function missingRequirements(pod: KObject, required: readonly string[]): string | undefined {
  const validation = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];
  const missing = new Map<string, Set<string>>();
  const spec = rec(pod.spec) ?? {};
  for (const c of [...recs(spec.containers), ...recs(spec.initContainers)]) {
    for (const r of required.filter((x) => validation.includes(x))) {
      const [which, name] = r.startsWith('limits.') ? ['limits', r.slice(7)] : ['requests', r.replace(/^requests\./, '')];
      if (rec(get(c, 'resources', which))?.[name] === undefined) {
        const set = missing.get(r) ?? new Set<string>();
        set.add(str(c.name) ?? '');
        missing.set(r, set);
      }
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}
