import type { KObject } from '../../api/types';
import { decodedEqual } from '../../registry/semantic-equal';
import { scaledValue } from '../../registry/types/workload-common';
import { computeTemplateHash } from './revision-hash';

/**
 * Pure helpers of the Deployment controller, after upstream's pkg/controller/deployment/util:
 * revisions and their annotations, the pod-template-hash, maxSurge/maxUnavailable fenceposts,
 * finding the new and old ReplicaSets, and the proportions of a scale. Annotation keys are
 * upstream's kubernetes.io spellings (kubectl rollout history reads them there); either spelling
 * is read.
 */

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
/** The label that tells a Deployment's ReplicaSets (and their pods) apart (upstream DefaultDeploymentUniqueLabelKey). */
export const POD_TEMPLATE_HASH = 'pod-template-hash';
/** Upstream keeps the revision history annotation under this many characters. */
const MAX_REVISION_HISTORY_CHARS = 2000;

/** Annotations never copied from a Deployment to its ReplicaSets (upstream annotationsToSkip). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  REVISION_HISTORY,
  DESIRED_REPLICAS,
  MAX_REPLICAS,
  'deprecated.deployment.rollback.to',
]);

export interface DeploymentSpec {
  replicas?: number;
  selector?: unknown;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown };
  strategy?: { type?: string; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

export const dspec = (d: KObject): DeploymentSpec => d.spec ?? {};
export const replicasOf = (o: KObject): number => (o.spec as { replicas?: number } | undefined)?.replicas ?? 0;
const statusNum = (o: KObject, f: string): number => ((o.status as Record<string, unknown> | undefined)?.[f] as number | undefined) ?? 0;
export const actualReplicas = (rs: KObject): number => statusNum(rs, 'replicas');
export const readyReplicas = (rs: KObject): number => statusNum(rs, 'readyReplicas');
export const availableReplicas = (rs: KObject): number => statusNum(rs, 'availableReplicas');

/** The annotation under its upstream key, or its svc.io spelling. */
export function annotation(o: KObject, key: string): string | undefined {
  const a = o.metadata.annotations;
  return a?.[key] ?? a?.[key.replace('kubernetes.io/', 'svc.io/')];
}

function intAnnotation(o: KObject, key: string): number | undefined {
  const v = annotation(o, key);
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

/** The ReplicaSet's revision (0 when absent or unparsable, as upstream's Revision after logging). */
export const revisionOf = (rs: KObject): number => intAnnotation(rs, REVISION) ?? 0;
export const maxRevision = (rss: readonly KObject[]): number => rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
export const desiredReplicasAnnotation = (rs: KObject): number | undefined => intAnnotation(rs, DESIRED_REPLICAS);
export const maxReplicasAnnotation = (rs: KObject): number | undefined => intAnnotation(rs, MAX_REPLICAS);

const sum = (rss: readonly (KObject | undefined)[], f: (rs: KObject) => number): number => rss.reduce((n, rs) => n + (rs ? f(rs) : 0), 0);
export const specReplicasSum = (rss: readonly (KObject | undefined)[]): number => sum(rss, replicasOf);
export const actualReplicasSum = (rss: readonly (KObject | undefined)[]): number => sum(rss, actualReplicas);
export const readyReplicasSum = (rss: readonly (KObject | undefined)[]): number => sum(rss, readyReplicas);
export const availableReplicasSum = (rss: readonly (KObject | undefined)[]): number => sum(rss, availableReplicas);

/** ReplicaSets with spec.replicas > 0 (upstream FilterActiveReplicaSets). */
export const activeReplicaSets = (rss: readonly (KObject | undefined)[]): KObject[] => rss.filter((rs): rs is KObject => !!rs && replicasOf(rs) > 0);

/** Oldest first, then by name (upstream ReplicaSetsByCreationTimestamp). */
export function byCreation(a: KObject, b: KObject): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/**
 * The pod-template-hash (upstream ComputeHash, shared with the DaemonSet's revisions in
 * revision-hash.ts): FNV-1a of the template's canonical JSON (keys sorted; null and empty-list
 * fields left out, as Go decodes them alike: `kubectl rollout undo` sends `creationTimestamp:
 * null`), then of collisionCount, in upstream's no-vowel alphabet. Upstream hashes a dump of the
 * Go struct, so the digits differ from upstream's for the same template (names keep their form:
 * `<deployment>-<hash>`).
 */
export function computeHash(template: unknown, collisionCount?: number): string {
  return computeTemplateHash(template ?? {}, collisionCount);
}

/**
 * Two templates equal apart from the pod-template-hash label (upstream EqualIgnoreHash, whose
 * semantic equality sees decoded Go structs: null and empty-list fields are absent ones, while a
 * pointer set to 0 or false is not).
 */
export function equalIgnoreHash(a: unknown, b: unknown): boolean {
  const strip = (t: unknown) => {
    const c = structuredClone((t ?? {}) as DeploymentSpec['template'] & object);
    if (c.metadata?.labels) {
      delete c.metadata.labels[POD_TEMPLATE_HASH];
      if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
    }
    return c;
  };
  return decodedEqual(strip(a), strip(b));
}

/** The ReplicaSet whose template is the Deployment's, oldest first if several (upstream FindNewReplicaSet). */
export function findNewReplicaSet(d: KObject, rss: readonly KObject[]): KObject | undefined {
  const tpl = dspec(d).template;
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash((rs.spec as DeploymentSpec | undefined)?.template, tpl));
}

/** Every other ReplicaSet (upstream FindOldReplicaSets: all of them, scaled to zero or not). */
export function findOldReplicaSets(d: KObject, rss: readonly KObject[]): KObject[] {
  const fresh = findNewReplicaSet(d, rss);
  return rss.filter((rs) => rs !== fresh);
}

/** Upstream ResolveFenceposts: surge rounds up, unavailable down; both zero makes unavailable 1. */
export function resolveFenceposts(maxSurge: number | string | undefined, maxUnavailable: number | string | undefined, desired: number): { surge: number; unavailable: number } {
  // A malformed value (validation refuses it) counts as 0.
  const surge = scaledValue(maxSurge, desired, true) ?? 0;
  let unavailable = scaledValue(maxUnavailable, desired, false) ?? 0;
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

const isRolling = (d: KObject): boolean => dspec(d).strategy?.type === 'RollingUpdate';

/** Upstream MaxUnavailable: 0 for Recreate or no replicas; never more than replicas. */
export function maxUnavailable(d: KObject): number {
  const replicas = replicasOf(d);
  if (!isRolling(d) || replicas === 0) return 0;
  const ru = dspec(d).strategy?.rollingUpdate;
  return Math.min(resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas).unavailable, replicas);
}

/** Upstream MaxSurge: 0 for Recreate. */
export function maxSurge(d: KObject): number {
  if (!isRolling(d)) return 0;
  const ru = dspec(d).strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d)).surge;
}

/** Upstream NewRSNewReplicas for RollingUpdate: how far the new ReplicaSet may grow now; Recreate: replicas. */
export function newRSNewReplicas(d: KObject, all: readonly (KObject | undefined)[], newRS: KObject): number {
  if (!isRolling(d)) return replicasOf(d);
  const current = specReplicasSum(all);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (current >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

/** Upstream SetReplicasAnnotations: desired- and max-replicas; answers whether anything changed. */
export function setReplicasAnnotations(rs: KObject, desired: number, max: number): boolean {
  const a = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of [
    [DESIRED_REPLICAS, String(desired)],
    [MAX_REPLICAS, String(max)],
  ] as const) {
    if (a[k] !== v) {
      a[k] = v;
      changed = true;
    }
  }
  return changed;
}

export function replicasAnnotationsNeedUpdate(rs: KObject, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[DESIRED_REPLICAS] !== String(desired) || a[MAX_REPLICAS] !== String(max);
}

/**
 * Upstream SetNewReplicaSetAnnotations: the Deployment's annotations copied (not the skipped
 * ones), the revision raised to newRevision (an existing revision moving up is a rollback: it is
 * appended to revision-history), and, for a ReplicaSet about to be created, the replicas
 * annotations. Answers whether anything changed.
 */
export function setNewReplicaSetAnnotations(d: KObject, rs: KObject, newRevision: number, exists: boolean): boolean {
  const a = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const old = a[REVISION];
  const oldNum = old !== undefined && /^\d+$/.test(old) ? Number(old) : 0;
  if (old !== undefined && oldNum === 0 && old !== '0') return changed; // unparsable: upstream leaves it
  if (oldNum < newRevision) {
    a[REVISION] = String(newRevision);
    changed = true;
    if (old !== undefined) appendRevisionHistory(a, old);
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

function appendRevisionHistory(a: Record<string, string>, old: string): void {
  const history = a[REVISION_HISTORY];
  if (!history) {
    a[REVISION_HISTORY] = old;
    return;
  }
  const parts = history.split(',');
  let total = history.length + old.length + 1;
  let start = 0;
  while (total > MAX_REVISION_HISTORY_CHARS && start < parts.length) total -= parts[start++].length + 1;
  if (total <= MAX_REVISION_HISTORY_CHARS) a[REVISION_HISTORY] = [...parts.slice(start), old].join(',');
}

/**
 * Upstream IsSaturated: the ReplicaSet is at the Deployment's size, annotated so, and all of it
 * available.
 */
export function isSaturated(d: KObject, rs: KObject | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  return desired !== undefined && replicasOf(rs) === replicasOf(d) && desired === replicasOf(d) && availableReplicas(rs) === replicasOf(d);
}

/** Upstream FindActiveOrLatest: the only active ReplicaSet, or the newest when none is active; undefined when several are. */
export function findActiveOrLatest(newRS: KObject | undefined, oldRSs: readonly KObject[]): KObject | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort(byCreation).reverse();
  const active = activeReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** Upstream getReplicaSetFraction: the change that keeps the ReplicaSet's share of the new size. */
function fraction(rs: KObject, d: KObject): number {
  if (replicasOf(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  const annotated = maxReplicasAnnotation(rs) ?? ((d.status as { replicas?: number } | undefined)?.replicas ?? 0);
  if (annotated === 0) return 0;
  return Math.round((replicasOf(rs) * deploymentReplicas) / annotated) - replicasOf(rs);
}

/** Upstream GetProportion: the ReplicaSet's part of toAdd, within what is left to add. */
export function proportion(rs: KObject | undefined, d: KObject, toAdd: number, added: number): number {
  if (!rs || replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const f = fraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(f, allowed) : Math.max(f, allowed);
}
