import { upstreamGroup } from '../../api/group-names';
import type { KObject } from '../../api/types';
import { get, rec, recs, str, strs } from '../obj-access';
import { parseQuantity } from '../quantity';
import type { ResourceType } from '../resource-type';
import { isBestEffort, isTerminating, missingRequirements, podMatchingResources, podUsage, usesCrossNamespacePodAffinity } from './pod-usage';
import { quantity, type ResourceList } from './resource-list';

/**
 * Quota evaluators (upstream pkg/quota/v1/evaluator/core and generic): for each kind, which
 * writes are charged, which quota resource names it counts, whether an object is in a quota's
 * scopes, and its usage. Pods, services and claims have their own; every other kind is counted
 * as objects under count/<resource>.<group> (and the legacy names of configmaps, secrets,
 * replicationcontrollers and resourcequotas).
 */

/** One scope requirement of a quota (spec.scopes as Exists, and spec.scopeSelector.matchExpressions). */
export interface ScopeSelector {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface QuotaEvaluator {
  /** Whether admission charges this write (upstream Handles). */
  handles(operation: string, subresource: string): boolean;
  /** The names of a quota's hard list this kind counts. */
  matchingResources(names: readonly string[]): string[];
  /** Whether the object is in this scope; kinds without scopes are in every one. */
  matchesScope(sel: ScopeSelector, obj: KObject): boolean;
  usage(obj: KObject, nowMs: number): ResourceList;
  /** Why the object cannot be admitted under a quota requiring these resources (upstream Constraints). */
  constraints(required: readonly string[], obj: KObject): string | undefined;
}

/** A quota's scopes as selectors (upstream getScopeSelectorsFromQuota). */
export function scopeSelectorsOf(quota: KObject): ScopeSelector[] {
  const spec = rec(quota.spec) ?? {};
  const out: ScopeSelector[] = strs(spec.scopes).map((s) => ({ scopeName: s, operator: 'Exists' }));
  for (const e of recs(rec(spec.scopeSelector)?.matchExpressions)) out.push({ scopeName: str(e.scopeName) ?? '', operator: str(e.operator) ?? '', values: strs(e.values) });
  return out;
}

/** Upstream quota Matches: the quota's status.hard names something the kind counts, and the object is in every scope. */
export function quotaMatches(quota: KObject, ev: QuotaEvaluator, obj: KObject): boolean {
  if (ev.matchingResources(Object.keys(rec(get(quota, 'status', 'hard')) ?? {})).length === 0) return false;
  return scopeSelectorsOf(quota).every((s) => ev.matchesScope(s, obj));
}

/** A selector over one value (the priority class), as label selector operators read it. */
function selectorMatches(sel: ScopeSelector, value: string | undefined): boolean {
  const values = sel.values ?? [];
  switch (sel.operator) {
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
  }
  return false;
}

/** Upstream podMatchesScopeFunc. */
function podMatchesScope(sel: ScopeSelector, pod: KObject): boolean {
  switch (sel.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass':
      return selectorMatches(sel, str(get(pod, 'spec', 'priorityClassName')) || undefined);
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
  }
  return false;
}

const podEvaluator: QuotaEvaluator = {
  handles: (op, sub) => op === 'CREATE' && sub === '',
  matchingResources: podMatchingResources,
  matchesScope: podMatchesScope,
  usage: podUsage,
  constraints: (required, pod) => missingRequirements(pod, required),
};

const inAnyScope = () => true;

/** count/<resource>[.<group>] in both spellings of an svc.io group. */
function countNames(t: ResourceType): string[] {
  if (!t.group) return [`count/${t.resource}`];
  const up = upstreamGroup(t.group);
  return [`count/${t.resource}.${t.group}`, ...(up ? [`count/${t.resource}.${up}`] : [])];
}

/** The legacy quota names of some core kinds (upstream's object count evaluators with an alias). */
const LEGACY: Readonly<Record<string, string>> = { configmaps: 'configmaps', secrets: 'secrets', replicationcontrollers: 'replicationcontrollers', resourcequotas: 'resourcequotas', services: 'services', persistentvolumeclaims: 'persistentvolumeclaims' };

function objectCountEvaluator(t: ResourceType): QuotaEvaluator {
  const names = [...countNames(t), ...(t.group === '' && LEGACY[t.resource] ? [LEGACY[t.resource]] : [])];
  return {
    handles: (op, sub) => op === 'CREATE' && sub === '',
    matchingResources: (hard) => hard.filter((n) => names.includes(n)),
    matchesScope: inAnyScope,
    usage: () => Object.fromEntries(names.map((n) => [n, quantity(1)])),
    constraints: () => undefined,
  };
}

/** Upstream service evaluator: services and node ports / load balancers, charged on create and on a type change. */
function serviceEvaluator(t: ResourceType): QuotaEvaluator {
  const counts = objectCountEvaluator(t);
  const extra = ['services.loadbalancers', 'services.nodeports'];
  return {
    handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && sub === '',
    matchingResources: (hard) => [...counts.matchingResources(hard), ...hard.filter((n) => extra.includes(n))],
    matchesScope: inAnyScope,
    usage(svc, nowMs) {
      const out = counts.usage(svc, nowMs);
      const spec = rec(svc.spec) ?? {};
      const ports = recs(spec.ports);
      if (spec.type === 'NodePort') out['services.nodeports'] = quantity(ports.length);
      if (spec.type === 'LoadBalancer') {
        // Without allocated node ports only the ports that name one use one (upstream's intent rule).
        out['services.nodeports'] = quantity(spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports.length);
        out['services.loadbalancers'] = quantity(1);
      }
      return out;
    },
    constraints: () => undefined,
  };
}

/** Upstream's storage class quota suffix, and svc's spelling of the same group. */
const STORAGE_CLASS_SUFFIXES = ['.storageclass.storage.k8s.io/', '.storageclass.storage.svc.io/'];

/** Upstream PVC evaluator: claims and requested storage, overall and per storage class; charged on create and on a resize. */
function claimEvaluator(t: ResourceType): QuotaEvaluator {
  const counts = objectCountEvaluator(t);
  const isClassName = (n: string) => STORAGE_CLASS_SUFFIXES.some((s) => n.endsWith(`${s}requests.storage`) || n.endsWith(`${s}persistentvolumeclaims`));
  return {
    handles: (op, sub) => (op === 'CREATE' || op === 'UPDATE') && sub === '',
    matchingResources: (hard) => [...counts.matchingResources(hard), ...hard.filter((n) => n === 'requests.storage' || isClassName(n))],
    matchesScope: inAnyScope,
    usage(pvc, nowMs) {
      const out = counts.usage(pvc, nowMs);
      const cls = pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? str(get(pvc, 'spec', 'storageClassName')) ?? '';
      for (const s of cls ? STORAGE_CLASS_SUFFIXES : []) out[`${cls}${s}persistentvolumeclaims`] = quantity(1);
      const requested = get(pvc, 'spec', 'resources', 'requests', 'storage');
      const q = typeof requested === 'string' || typeof requested === 'number' ? parseQuantity(requested) : undefined;
      if (q) {
        out['requests.storage'] = q;
        for (const s of cls ? STORAGE_CLASS_SUFFIXES : []) out[`${cls}${s}requests.storage`] = q;
      }
      return out;
    },
    constraints: () => undefined,
  };
}

/** The evaluator of a kind. */
export function evaluatorFor(t: ResourceType): QuotaEvaluator {
  if (t.group === '' && t.resource === 'pods') return podEvaluator;
  if (t.group === '' && t.resource === 'services') return serviceEvaluator(t);
  if (t.group === '' && t.resource === 'persistentvolumeclaims') return claimEvaluator(t);
  return objectCountEvaluator(t);
}
