import { isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import { get, num, str } from '../../registry/obj-access';
import { withRevisionTemplate } from './history';
import { isPodAvailable, isPodReady, podPhase } from './pod-state';
import { slowStartBatch } from './pod-control';
import { newControllerRef } from './controller-ref';
import { identityMatches, inOrdinalRange, newStatefulSetPod, ordinalOf, podRevision, replicasOf, startOrdinal, storageMatches } from './statefulset-identity';
import type { StatefulPodControl } from './statefulset-pod-control';

/**
 * One pass of upstream's defaultStatefulSetControl.updateStatefulSet over a set's pods:
 *
 * 1. Replicas (ordinals [start, start + replicas)) are processed in ordinal order: a missing pod is
 *    made (claims first) at the current revision below the partition and at the update revision
 *    otherwise; a finished (Failed or Succeeded) pod is deleted to be made again next time. With
 *    OrderedReady ("monotonic") the pass stops at the first pod it created, at a terminating pod,
 *    and at one not Running and Ready (and available for minReadySeconds); Parallel goes on.
 * 2. Condemned pods (ordinals outside the range) are deleted from the highest ordinal down; with
 *    OrderedReady one per pass, and only once every replica is healthy (or it is the first
 *    unhealthy pod).
 * 3. RollingUpdate: the highest ordinal ≥ partition whose pod is not at the update revision is
 *    deleted (it is made again at the update revision by a later pass), one at a time, each
 *    waiting for the pods above it to be healthy. OnDelete stops before this step.
 *
 * Answers the status the pass observed.
 */

export interface StatefulSetStatus {
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  currentReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
}

const isCreated = (p: KObject) => podPhase(p) !== '';
const isTerminating = (p: KObject) => !!p.metadata.deletionTimestamp;
const isFinished = (p: KObject) => podPhase(p) === 'Failed' || podPhase(p) === 'Succeeded';
const isRunningAndReady = (p: KObject) => podPhase(p) === 'Running' && isPodReady(p);

export interface RevisionPair {
  current: KObject;
  update: KObject;
  collisionCount: number;
}

export class StatefulSetControl {
  constructor(
    private readonly podControl: StatefulPodControl,
    private readonly nowMs: () => number,
  ) {}

  private minReady(set: KObject): number {
    return num(get(set, 'spec', 'minReadySeconds')) ?? 0;
  }

  private available(set: KObject, p: KObject): boolean {
    return isRunningAndReady(p) && isPodAvailable(p, this.minReady(set), this.nowMs());
  }

  private healthy(p: KObject): boolean {
    return isRunningAndReady(p) && !isTerminating(p);
  }

  /** Upstream updateStatus / computeReplicaStatus over the pods the pass holds. */
  private countInto(status: StatefulSetStatus, set: KObject, pods: readonly KObject[]): void {
    Object.assign(status, { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 });
    for (const p of pods) {
      if (isCreated(p)) status.replicas++;
      if (isRunningAndReady(p)) {
        status.readyReplicas++;
        if (this.available(set, p)) status.availableReplicas++;
      }
      if (isCreated(p) && !isTerminating(p)) {
        if (podRevision(p) === status.currentRevision) status.currentReplicas++;
        if (podRevision(p) === status.updateRevision) status.updatedReplicas++;
      }
    }
  }

  /** Upstream newVersionedStatefulSetPod: below the partition (RollingUpdate) at the current revision, else at the update revision. */
  private versionedPod(set: KObject, revs: RevisionPair, ordinal: number): KObject {
    const strategy = (get(set, 'spec', 'updateStrategy') ?? {}) as { type?: string; rollingUpdate?: { partition?: number } };
    const rolling = strategy.type === 'RollingUpdate';
    const partition = strategy.rollingUpdate ? (strategy.rollingUpdate.partition ?? 0) : undefined;
    const currentCount = num(get(set, 'status', 'currentReplicas')) ?? 0;
    const belowPartition = rolling && (partition === undefined ? ordinal < startOrdinal(set) + currentCount : ordinal < startOrdinal(set) + partition);
    const at = belowPartition ? revs.current : revs.update;
    return newStatefulSetPod(withRevisionTemplate(set, at), ordinal, newControllerRef(set, 'apps/v1', 'StatefulSet'), at.metadata.name!);
  }

  /** The pass; a failed step ends it, and the status observed so far is answered with the error (upstream writes that status too). */
  async updateStatefulSet(set: KObject, revs: RevisionPair, pods: readonly KObject[]): Promise<{ status: StatefulSetStatus; error?: unknown }> {
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata.generation ?? 0,
      replicas: 0,
      readyReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
      availableReplicas: 0,
      currentRevision: revs.current.metadata.name!,
      updateRevision: revs.update.metadata.name!,
      collisionCount: revs.collisionCount,
    };
    const start = startOrdinal(set);
    const replicas: KObject[] = new Array<KObject>(replicasOf(set));
    const condemned: KObject[] = [];
    for (const p of pods) {
      if (inOrdinalRange(p, set)) replicas[ordinalOf(p) - start] = p;
      else if (ordinalOf(p) >= 0) condemned.push(p);
    }
    for (let i = 0; i < replicas.length; i++) replicas[i] ??= this.versionedPod(set, revs, start + i);
    condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));
    this.countInto(status, set, [...replicas, ...condemned]);
    // The first unhealthy pod: among replicas in order, else among condemned from the lowest ordinal.
    const firstUnhealthy = replicas.find((p) => !this.healthy(p)) ?? [...condemned].reverse().find((p) => !this.healthy(p));
    if (set.metadata.deletionTimestamp) return { status };
    try {
      await this.act(set, revs, status, replicas, condemned, firstUnhealthy);
      return { status };
    } catch (error) {
      return { status, error };
    }
  }

  private async act(set: KObject, revs: RevisionPair, status: StatefulSetStatus, replicas: KObject[], condemned: KObject[], firstUnhealthy: KObject | undefined): Promise<void> {
    const monotonic = str(get(set, 'spec', 'podManagementPolicy')) !== 'Parallel';
    const updateSet = withRevisionTemplate(set, revs.update);
    if (await runForAll(replicas.length, (i) => this.processReplica(set, updateSet, monotonic, replicas[i]), monotonic)) return;
    if (await runForAll(condemned.length, (i) => this.fixCondemnedClaims(updateSet, condemned[i]), monotonic)) return;
    if (await runForAll(condemned.length, (i) => this.processCondemned(set, firstUnhealthy, monotonic, condemned[i]), monotonic)) return;
    if (str(get(set, 'spec', 'updateStrategy', 'type')) === 'OnDelete') return;
    const updateMin = num(get(set, 'spec', 'updateStrategy', 'rollingUpdate', 'partition')) ?? 0;
    for (let target = replicas.length - 1; target >= updateMin; target--) {
      const pod = replicas[target];
      if (podRevision(pod) !== status.updateRevision && !isTerminating(pod)) {
        await this.podControl.deleteStatefulPod(set, pod).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        status.currentReplicas--;
        return;
      }
      if (!this.healthy(pod) || !this.available(set, pod)) return;
    }
  }

  /** Upstream processReplica: true when the pass must stop here. */
  private async processReplica(set: KObject, updateSet: KObject, monotonic: boolean, pod: KObject): Promise<boolean> {
    if (isFinished(pod)) {
      // Deleted now, made again by the pass after the store has let it go.
      if (!isTerminating(pod)) await this.podControl.deleteStatefulPod(set, pod);
      return true;
    }
    if (!isCreated(pod)) {
      if (this.podControl.podClaimIsStale(set, pod)) return true;
      await this.podControl.createStatefulPod(set, pod);
      return monotonic;
    }
    if (podPhase(pod) === 'Pending') await this.podControl.createMissingClaims(set, pod);
    if (monotonic && (isTerminating(pod) || !isRunningAndReady(pod) || !this.available(set, pod))) return true;
    if (identityMatches(set, pod) && storageMatches(set, pod) && this.podControl.claimsMatchRetentionPolicy(updateSet, pod)) return false;
    await this.podControl.updateStatefulPod(updateSet, pod);
    return false;
  }

  /** Upstream's claim fix-up of condemned pods before they go (whenScaled Delete gives their claims to the pod). */
  private async fixCondemnedClaims(updateSet: KObject, pod: KObject): Promise<boolean> {
    if (!this.podControl.claimsMatchRetentionPolicy(updateSet, pod)) await this.podControl.updateClaimsForRetention(updateSet, pod);
    return false;
  }

  /** Upstream processCondemned: true when the pass must stop here. */
  private async processCondemned(set: KObject, firstUnhealthy: KObject | undefined, monotonic: boolean, pod: KObject): Promise<boolean> {
    if (isTerminating(pod)) return monotonic;
    if (monotonic && pod !== firstUnhealthy && (!isRunningAndReady(pod) || !this.available(set, pod))) return true;
    await this.podControl.deleteStatefulPod(set, pod);
    return true;
  }
}

/**
 * Upstream runForAll: in order, stopping at the first that says stop (monotonic); otherwise all,
 * in slow-start batches, stopping only at an error. Answers whether the pass must stop.
 */
async function runForAll(n: number, fn: (i: number) => Promise<boolean>, monotonic: boolean): Promise<boolean> {
  if (monotonic) {
    for (let i = 0; i < n; i++) if (await fn(i)) return true;
    return false;
  }
  const { error } = await slowStartBatch(n, 1, async (i) => {
    await fn(i);
  });
  if (error !== undefined) throw error as Error;
  return false;
}
