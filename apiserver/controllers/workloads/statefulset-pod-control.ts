import type { EventRecorder } from '../../../common/events/recorder';
import { isAlreadyExists, isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import { refTo } from './pod-control';
import { claimHasStalePodOwner, claimOwnerRefs, claimOwnersMatch, claimsFor, fixIdentity, identityMatches, ordinalOf, retentionPolicy } from './statefulset-identity';

/**
 * Upstream StatefulPodControl: creates a pod's claims and then the pod, deletes pods, repairs a
 * pod's identity labels, and keeps its claims' owner references in line with the retention
 * policy, recording upstream's events on the set ("create Pod web-0 in StatefulSet web
 * successful", "create Claim www-web-0 Pod web-0 in StatefulSet web success").
 */

export interface StatefulPodTypes {
  pods: ResourceType;
  claims: ResourceType;
}

/** A claim as the informer has it (undefined when absent). */
export type ClaimLister = (namespace: string, name: string) => KObject | undefined;

const title = (verb: string) => verb[0].toUpperCase() + verb.slice(1);

export class StatefulPodControl {
  constructor(
    private readonly store: ObjectStore,
    private readonly types: StatefulPodTypes,
    private readonly recorder: EventRecorder,
    private readonly ctx: WriteContext,
    private readonly claims: ClaimLister,
  ) {}

  private podEvent(verb: string, set: KObject, pod: KObject, err?: unknown): void {
    const name = pod.metadata.name;
    if (err === undefined) this.recorder.event(refTo(set), 'Normal', `Successful${title(verb)}`, `${verb} Pod ${name} in StatefulSet ${set.metadata.name} successful`);
    else this.recorder.event(refTo(set), 'Warning', `Failed${title(verb)}`, `${verb} Pod ${name} in StatefulSet ${set.metadata.name} failed error: ${(err as Error).message}`);
  }

  private claimEvent(verb: string, set: KObject, pod: KObject, claim: KObject, err?: unknown): void {
    const c = claim.metadata.name;
    if (err === undefined) this.recorder.event(refTo(set), 'Normal', `Successful${title(verb)}`, `${verb} Claim ${c} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`);
    else this.recorder.event(refTo(set), 'Warning', `Failed${title(verb)}`, `${verb} Claim ${c} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${(err as Error).message}`);
  }

  /**
   * Upstream createPersistentVolumeClaims: makes each of the pod's claims that does not exist;
   * fails when one is being deleted (the pod must wait for a fresh claim).
   */
  async createMissingClaims(set: KObject, pod: KObject): Promise<void> {
    const errors: string[] = [];
    for (const { claim } of claimsFor(set, ordinalOf(pod))) {
      const ns = claim.metadata.namespace ?? '';
      let existing = this.claims(ns, claim.metadata.name!);
      if (!existing) {
        try {
          await this.store.create(this.types.claims, ns, claim, this.ctx);
          this.claimEvent('create', set, pod, claim);
          continue;
        } catch (err) {
          if (!isAlreadyExists(err)) {
            this.claimEvent('create', set, pod, claim, err);
            errors.push(`failed to create PVC ${claim.metadata.name}: ${(err as Error).message}`);
            continue;
          }
          existing = await this.store.get(this.types.claims, ns, claim.metadata.name!);
        }
      }
      if (existing.metadata.deletionTimestamp) errors.push(`pvc ${claim.metadata.name} is being deleted`);
    }
    if (errors.length) throw new Error(errors.join('; '));
  }

  /** Upstream CreateStatefulPod: the claims first, then the pod, then the claims' owners for the retention policy. */
  async createStatefulPod(set: KObject, pod: KObject): Promise<KObject> {
    try {
      await this.createMissingClaims(set, pod);
    } catch (err) {
      this.podEvent('create', set, pod, err);
      throw err;
    }
    let created: KObject;
    try {
      created = await this.store.create(this.types.pods, set.metadata.namespace ?? '', pod, this.ctx);
    } catch (err) {
      // An existing pod of that name is not news (upstream sinks AlreadyExists without an event).
      if (!isAlreadyExists(err)) this.podEvent('create', set, pod, err);
      throw err;
    }
    try {
      await this.updateClaimsForRetention(set, created);
    } catch (err) {
      this.podEvent('update', set, created, err);
      throw err;
    }
    this.podEvent('create', set, created);
    return created;
  }

  /** Upstream DeleteStatefulPod (uid precondition; a pod already gone is no error). */
  async deleteStatefulPod(set: KObject, pod: KObject): Promise<void> {
    try {
      await this.store.delete(this.types.pods, pod.metadata.namespace ?? '', pod.metadata.name!, { preconditions: { uid: pod.metadata.uid } }, this.ctx);
      this.podEvent('delete', set, pod);
    } catch (err) {
      if (isNotFound(err)) return;
      this.podEvent('delete', set, pod, err);
      throw err;
    }
  }

  /**
   * Upstream UpdateStatefulPod: the claims' owners for the retention policy, then the identity
   * labels when they are off (an "update" event then). Upstream also rewrites the volumes of a pod
   * whose storage does not match; a pod's volumes cannot change, so that write fails there and we
   * do not attempt it.
   */
  async updateStatefulPod(set: KObject, pod: KObject): Promise<void> {
    try {
      if (!this.claimsMatchRetentionPolicy(set, pod)) await this.updateClaimsForRetention(set, pod);
      if (identityMatches(set, pod)) return;
      const { object } = await this.store.update(
        this.types.pods,
        pod.metadata.namespace ?? '',
        pod.metadata.name!,
        (cur) => {
          if (!cur || cur.metadata.uid !== pod.metadata.uid) throw new Error(`pod ${pod.metadata.name} was replaced`);
          fixIdentity(set, cur);
          return cur;
        },
        this.ctx,
      );
      this.podEvent('update', set, object);
    } catch (err) {
      this.podEvent('update', set, pod, err);
      throw err;
    }
  }

  /** Upstream ClaimsMatchRetentionPolicy: every existing claim of the pod has the owners the policy asks for. */
  claimsMatchRetentionPolicy(set: KObject, pod: KObject): boolean {
    return claimsFor(set, ordinalOf(pod)).every(({ claim }) => {
      const existing = this.claims(claim.metadata.namespace ?? '', claim.metadata.name!);
      return !existing || claimOwnersMatch(existing, set, pod);
    });
  }

  /** Upstream UpdatePodClaimForRetentionPolicy: rewrites the owner references of the pod's claims that disagree with the policy. */
  async updateClaimsForRetention(set: KObject, pod: KObject): Promise<void> {
    for (const { claim } of claimsFor(set, ordinalOf(pod))) {
      const ns = claim.metadata.namespace ?? '';
      const cached = this.claims(ns, claim.metadata.name!);
      if (cached && claimOwnersMatch(cached, set, pod)) continue;
      try {
        await this.store.update(
          this.types.claims,
          ns,
          claim.metadata.name!,
          (cur) => {
            if (!cur) throw new Error('claim vanished');
            const refs = claimOwnerRefs(cur, set, pod);
            if (refs.length) cur.metadata.ownerReferences = refs;
            else delete cur.metadata.ownerReferences;
            return cur;
          },
          this.ctx,
        );
      } catch (err) {
        // A claim not made yet (or already collected) has no owners to fix.
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /**
   * Upstream PodClaimIsStale: under whenScaled Delete, a claim still owned by an earlier pod of
   * this name is on its way out; the pod must not be made until the collector removed it.
   */
  podClaimIsStale(set: KObject, pod: KObject): boolean {
    if (retentionPolicy(set).whenScaled === 'Retain') return false;
    return claimsFor(set, ordinalOf(pod)).some(({ claim }) => {
      const existing = this.claims(claim.metadata.namespace ?? '', claim.metadata.name!);
      return existing !== undefined && claimHasStalePodOwner(existing, pod);
    });
  }
}
