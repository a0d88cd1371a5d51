import type { KObject } from '../../api/types';
import { calculateStatus, deploymentComplete, msUntilDeadline, rolloutConditions, type DeploymentStatus } from './deployment-status';
import {
  activeReplicaSets,
  actualReplicas,
  availableReplicas,
  byCreation,
  dspec,
  findActiveOrLatest,
  isSaturated,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  proportion,
  replicasOf,
  revisionOf,
  specReplicasSum,
} from './deployment-util';

/**
 * The strategies of upstream's Deployment controller (rolling.go, recreate.go, sync.go): what to
 * scale, in what order, and what status to write. Reading and writing go through RolloutOps,
 * which the controller implements over the store; these functions decide.
 */

export interface RolloutOps {
  now(): number;
  /** The new ReplicaSet (created when asked and missing, its revision synced) and the old ones (upstream getAllReplicaSetsAndSyncRevision). */
  replicaSets(d: KObject, rsList: readonly KObject[], create: boolean): Promise<{ newRS?: KObject; oldRSs: KObject[] }>;
  /**
   * Upstream scaleReplicaSet: sets rs to size with the replicas annotations (no write when both
   * are already so) and records ScalingReplicaSet when the size changed; answers the ReplicaSet as
   * written (or as given).
   */
  scale(rs: KObject, size: number, d: KObject, operation: 'up' | 'down'): Promise<KObject>;
  deleteReplicaSet(rs: KObject): Promise<void>;
  /** Writes the Deployment's status unless it is what the cache holds. */
  writeStatus(d: KObject, s: DeploymentStatus): Promise<void>;
  requeueAfter(d: KObject, ms: number): void;
  /** Whether pods of the old ReplicaSets still run (Recreate waits for none). */
  oldPodsRunning(newRS: KObject | undefined, oldRSs: readonly KObject[]): boolean;
}

/** Upstream scaleReplicaSetAndRecordEvent: no write when already that size. */
async function scaleTo(ops: RolloutOps, rs: KObject, size: number, d: KObject): Promise<{ scaled: boolean; rs: KObject }> {
  const cur = replicasOf(rs);
  if (cur === size) return { scaled: false, rs };
  return { scaled: true, rs: await ops.scale(rs, size, d, cur < size ? 'up' : 'down') };
}

/** Upstream rolloutRolling. */
export async function rolloutRolling(ops: RolloutOps, d: KObject, rsList: readonly KObject[]): Promise<void> {
  const found = await ops.replicaSets(d, rsList, true);
  let newRS = found.newRS;
  let oldRSs = found.oldRSs;
  if (newRS) {
    const r = await reconcileNewReplicaSet(ops, d, [...oldRSs, newRS], newRS);
    newRS = r.rs;
    if (r.scaled) return syncRolloutStatus(ops, d, [...oldRSs, newRS], newRS);
  }
  const old = await reconcileOldReplicaSets(ops, d, oldRSs, newRS);
  oldRSs = old.oldRSs;
  if (old.scaled) return syncRolloutStatus(ops, d, [...oldRSs, newRS], newRS);
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(ops, d, oldRSs);
  await syncRolloutStatus(ops, d, [...oldRSs, newRS], newRS);
}

/** Upstream reconcileNewReplicaSet: grow the new ReplicaSet within maxSurge, or shrink it to replicas. */
async function reconcileNewReplicaSet(ops: RolloutOps, d: KObject, all: KObject[], newRS: KObject): Promise<{ scaled: boolean; rs: KObject }> {
  const want = replicasOf(d);
  if (replicasOf(newRS) === want) return { scaled: false, rs: newRS };
  if (replicasOf(newRS) > want) return scaleTo(ops, newRS, want, d);
  return scaleTo(ops, newRS, newRSNewReplicas(d, all, newRS), d);
}

/**
 * Upstream reconcileOldReplicaSets: shrink the old ReplicaSets as far as maxUnavailable allows,
 * first their unhealthy replicas (oldest ReplicaSet first), then available ones.
 */
async function reconcileOldReplicaSets(ops: RolloutOps, d: KObject, oldRSs: KObject[], newRS: KObject | undefined): Promise<{ scaled: boolean; oldRSs: KObject[] }> {
  if (specReplicasSum(oldRSs) === 0) return { scaled: false, oldRSs };
  const allPods = specReplicasSum([...oldRSs, newRS]);
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newUnavailable = newRS ? replicasOf(newRS) - availableReplicas(newRS) : 0;
  const maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return { scaled: false, oldRSs };
  const cleaned = await cleanupUnhealthyReplicas(ops, d, oldRSs, maxScaledDown);
  const down = await scaleDownOldForRollingUpdate(ops, d, [...cleaned.oldRSs, newRS], cleaned.oldRSs);
  return { scaled: cleaned.count + down.count > 0, oldRSs: down.oldRSs };
}

/** Upstream cleanupUnhealthyReplicas: scale away old replicas that are not available, up to max. */
async function cleanupUnhealthyReplicas(ops: RolloutOps, d: KObject, oldRSs: KObject[], max: number): Promise<{ count: number; oldRSs: KObject[] }> {
  const out = [...oldRSs].sort(byCreation);
  let total = 0;
  for (let i = 0; i < out.length && total < max; i++) {
    const rs = out[i];
    if (replicasOf(rs) === 0) continue;
    const unhealthy = replicasOf(rs) - availableReplicas(rs);
    if (unhealthy <= 0) continue;
    const n = Math.min(max - total, unhealthy);
    out[i] = (await scaleTo(ops, rs, replicasOf(rs) - n, d)).rs;
    total += n;
  }
  return { count: total, oldRSs: out };
}

/** Upstream scaleDownOldReplicaSetsForRollingUpdate: remove available old replicas down to minAvailable, oldest ReplicaSet first. */
async function scaleDownOldForRollingUpdate(ops: RolloutOps, d: KObject, all: (KObject | undefined)[], oldRSs: KObject[]): Promise<{ count: number; oldRSs: KObject[] }> {
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  // A ReplicaSet counts at most the replicas it is asked for: just scaled down, its status still
  // shows the pods its controller is deleting (upstream counts them, and can then scale down
  // below minAvailable when that status is read before the ReplicaSet controller rewrites it).
  const available = all.reduce((n, rs) => n + (rs ? Math.min(availableReplicas(rs), replicasOf(rs)) : 0), 0);
  if (available <= minAvailable) return { count: 0, oldRSs };
  const toScaleDown = available - minAvailable;
  const out = [...oldRSs].sort(byCreation);
  let total = 0;
  for (let i = 0; i < out.length && total < toScaleDown; i++) {
    const rs = out[i];
    if (replicasOf(rs) === 0) continue;
    const n = Math.min(replicasOf(rs), toScaleDown - total);
    out[i] = (await scaleTo(ops, rs, replicasOf(rs) - n, d)).rs;
    total += n;
  }
  return { count: total, oldRSs: out };
}

/**
 * Upstream rolloutRecreate: every old ReplicaSet to zero, wait until none of their pods runs,
 * then the new ReplicaSet (created only now) to replicas.
 */
export async function rolloutRecreate(ops: RolloutOps, d: KObject, rsList: readonly KObject[]): Promise<void> {
  let { newRS, oldRSs } = await ops.replicaSets(d, rsList, false);
  let scaledDown = false;
  oldRSs = [...oldRSs];
  for (let i = 0; i < oldRSs.length; i++) {
    if (replicasOf(oldRSs[i]) === 0) continue;
    const r = await scaleTo(ops, oldRSs[i], 0, d);
    oldRSs[i] = r.rs;
    scaledDown ||= r.scaled;
  }
  if (scaledDown || ops.oldPodsRunning(newRS, oldRSs)) return syncRolloutStatus(ops, d, [...oldRSs, newRS], newRS);
  if (!newRS) ({ newRS, oldRSs } = await ops.replicaSets(d, rsList, true));
  if (newRS) newRS = (await scaleTo(ops, newRS, replicasOf(d), d)).rs;
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(ops, d, oldRSs);
  await syncRolloutStatus(ops, d, [...oldRSs, newRS], newRS);
}

/**
 * Upstream sync: a scaling event or a paused Deployment scales its ReplicaSets (proportionally
 * while several are active), cleans up old ones when paused, and writes status without the
 * progress conditions.
 */
export async function syncScale(ops: RolloutOps, d: KObject, rsList: readonly KObject[]): Promise<void> {
  const { newRS, oldRSs } = await ops.replicaSets(d, rsList, false);
  const scaled = await scaleDeployment(ops, d, newRS, oldRSs);
  if (dspec(d).paused) await cleanupDeployment(ops, d, scaled.oldRSs);
  const all = [...scaled.oldRSs, scaled.newRS];
  await ops.writeStatus(d, calculateStatus(all, scaled.newRS, d, ops.now()));
}

/** Upstream scale: the one active ReplicaSet to replicas; old ones to zero once the new is saturated; else proportionally. */
async function scaleDeployment(ops: RolloutOps, d: KObject, newRS: KObject | undefined, oldRSs: KObject[]): Promise<{ newRS?: KObject; oldRSs: KObject[] }> {
  const replace = (rs: KObject) => {
    if (newRS && rs.metadata.uid === newRS.metadata.uid) newRS = rs;
    else oldRSs = oldRSs.map((o) => (o.metadata.uid === rs.metadata.uid ? rs : o));
  };
  const only = findActiveOrLatest(newRS, oldRSs);
  if (only) {
    if (replicasOf(only) !== replicasOf(d)) replace((await scaleTo(ops, only, replicasOf(d), d)).rs);
    return { newRS, oldRSs };
  }
  if (isSaturated(d, newRS)) {
    for (const old of activeReplicaSets(oldRSs)) replace((await scaleTo(ops, old, 0, d)).rs);
    return { newRS, oldRSs };
  }
  if (dspec(d).strategy?.type !== 'RollingUpdate') return { newRS, oldRSs };
  const active = activeReplicaSets([...oldRSs, newRS]);
  const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicasSum(active);
  // Upstream: growing, the largest (then newest) first; shrinking, the largest (then oldest) first.
  const bySize = (newerFirst: boolean) => (a: KObject, b: KObject) => replicasOf(b) - replicasOf(a) || (newerFirst ? byCreation(b, a) : byCreation(a, b));
  if (toAdd > 0) active.sort(bySize(true));
  else if (toAdd < 0) active.sort(bySize(false));
  let added = 0;
  const sizes = new Map<string, number>();
  for (const rs of active) {
    const p = toAdd !== 0 ? proportion(rs, d, toAdd, added) : 0;
    sizes.set(rs.metadata.uid!, replicasOf(rs) + p);
    added += p;
  }
  for (let i = 0; i < active.length; i++) {
    const rs = active[i];
    let size = sizes.get(rs.metadata.uid!)!;
    if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
    // Upstream calls scaleReplicaSet for every one: it also refreshes the replicas annotations when the size stays.
    replace(await ops.scale(rs, size, d, toAdd > 0 ? 'up' : 'down'));
  }
  return { newRS, oldRSs };
}

/**
 * Upstream cleanupDeployment: beyond revisionHistoryLimit, delete the oldest old ReplicaSets
 * (by revision) that are fully scaled down and whose generation their controller has observed.
 */
export async function cleanupDeployment(ops: RolloutOps, d: KObject, oldRSs: readonly KObject[]): Promise<void> {
  const limit = dspec(d).revisionHistoryLimit;
  if (limit === undefined) return;
  const alive = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = alive.length - limit;
  if (diff <= 0) return;
  const byRevision = [...alive].sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b));
  for (const rs of byRevision.slice(0, diff)) {
    const observed = ((rs.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0) >= (rs.metadata.generation ?? 0);
    if (actualReplicas(rs) !== 0 || replicasOf(rs) !== 0 || !observed) continue;
    await ops.deleteReplicaSet(rs);
  }
}

/** Upstream syncRolloutStatus: status with the progress conditions; when unchanged, come back at the deadline. */
export async function syncRolloutStatus(ops: RolloutOps, d: KObject, all: readonly (KObject | undefined)[], newRS: KObject | undefined): Promise<void> {
  const now = ops.now();
  const s = calculateStatus(all, newRS, d, now);
  rolloutConditions(d, s, newRS, all, now);
  await ops.writeStatus(d, s);
  const wait = msUntilDeadline(d, s, now);
  if (wait !== undefined) ops.requeueAfter(d, wait);
}
