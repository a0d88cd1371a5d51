import { referenceTo } from '../../common/events/object-ref';
import type { EventRecorder } from '../../common/events/recorder';
import { isAlreadyExists, isConflict, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { setPodCondition } from '../registry/types/pod-conditions';
import type { ObjectStore, WriteContext } from '../store/object-store';

export interface VictimWrites {
  store: ObjectStore;
  pods: ResourceType;
  ctx: WriteContext;
  recorder: EventRecorder;
  schedulerName: string;
  now: () => Date;
}

/**
 * Upstream's preemption executor (prepareCandidate) for one victim: condition
 * DisruptionTarget=True reason PreemptionByScheduler through pods/status, then an ordinary graceful
 * delete (the node agent finishes it) with the victim's uid as precondition, and a Preempted event
 * naming the preemptor's uid and the node. A victim already terminating is left to finish (an
 * update of a terminating pod here would end its deletion; see the eviction notes in
 * docs/architecture.md); one gone or replaced meanwhile needs nothing.
 */
export async function preemptVictim(w: VictimWrites, victim: KObject, preemptor: KObject, node: string): Promise<void> {
  if (victim.metadata.deletionTimestamp) return;
  const ns = victim.metadata.namespace ?? '';
  const name = victim.metadata.name ?? '';
  try {
    await w.store.update(
      w.pods,
      ns,
      name,
      (fresh) => {
        if (!fresh || fresh.metadata.uid !== victim.metadata.uid || fresh.metadata.deletionTimestamp) return fresh ?? victim;
        setPodCondition(fresh, { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: `${w.schedulerName}: preempting to accommodate a higher priority pod` }, w.now());
        delete fresh.metadata.resourceVersion;
        return fresh;
      },
      { ...w.ctx, subresource: 'status' },
    );
    await w.store.delete(w.pods, ns, name, { preconditions: { uid: victim.metadata.uid } }, w.ctx);
  } catch (err) {
    if (isNotFound(err) || isConflict(err) || isAlreadyExists(err)) return;
    throw err;
  }
  w.recorder.event(referenceTo(victim), 'Normal', 'Preempted', `Preempted by pod ${preemptor.metadata.uid ?? ''} on node ${node}`, { action: 'Preempting' });
}

/**
 * Upstream's clearing of lower-priority nominations (getLowerPriorityNominatedPods): a pending pod
 * of lower priority nominated to the node the preemptor now takes loses its nomination, so it is
 * considered afresh rather than counted against the room.
 */
export async function clearNomination(w: VictimWrites, pod: KObject): Promise<void> {
  try {
    await w.store.update(
      w.pods,
      pod.metadata.namespace ?? '',
      pod.metadata.name ?? '',
      (fresh) => {
        const status = fresh?.status as Record<string, unknown> | undefined;
        if (!fresh || fresh.metadata.uid !== pod.metadata.uid || !status?.nominatedNodeName) return fresh ?? pod;
        delete status.nominatedNodeName;
        delete fresh.metadata.resourceVersion;
        return fresh;
      },
      { ...w.ctx, subresource: 'status' },
    );
  } catch (err) {
    if (isNotFound(err) || isConflict(err)) return;
    throw err;
  }
}
