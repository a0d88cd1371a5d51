import { bothKeys } from '../api/group-names';
import { errors, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { get, rec, strAt } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER } from '../scheduler/volume-match';
import type { ObjectStore, WriteContext } from '../store/object-store';
import { controllerContext } from '../store/system-context';

/**
 * The writes of the PV binder (upstream's persistentvolume-controller bind, unbind and phase
 * updates), each one store update that recomputes from the current object, so that a concurrent
 * write makes it re-read rather than fail.
 */

export const binderCtx: WriteContext = controllerContext('persistentvolume-binder-controller');
const statusCtx: WriteContext = { ...binderCtx, subresource: 'status' };

/** An annotation in either spelling (svc.io first). */
export function annotation(o: KObject, key: string): string | undefined {
  const a = o.metadata.annotations;
  if (!a) return undefined;
  for (const k of bothKeys(key)) if (typeof a[k] === 'string') return a[k];
  return undefined;
}

/** The types the binder writes. */
export interface BinderTypes {
  claims: ResourceType;
  volumes: ResourceType;
}

async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function unpinned(o: KObject): KObject {
  delete o.metadata.resourceVersion;
  return o;
}

/** Upstream bindVolumeToClaim + updateVolumePhase(Bound): the volume's claimRef names the claim (with its uid), then status Bound. */
export async function bindVolume(store: ObjectStore, t: BinderTypes, pv: KObject, claim: KObject): Promise<KObject | undefined> {
  const name = pv.metadata.name ?? '';
  const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion };
  const written = await ignoreNotFound(
    store.update(t.volumes, '', name, (cur) => {
      if (!cur) throw new Error('volume gone');
      const spec = (cur.spec ??= {}) as Record<string, unknown>;
      const have = rec(spec.claimRef);
      if (have && have.uid === ref.uid && have.name === ref.name && have.namespace === ref.namespace) return cur;
      // A volume the controller (not its creator) pre-bound is marked so that unbinding may undo it.
      if (!have) cur.metadata.annotations = { ...cur.metadata.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      spec.claimRef = ref;
      return unpinned(cur);
    }, binderCtx),
  );
  if (!written) return undefined;
  return setVolumePhase(store, t, name, 'Bound');
}

/** Upstream bindClaimToVolume + updateClaimStatus: spec.volumeName and the bind-completed annotations, then status Bound with the volume's capacity and access modes. */
export async function bindClaim(store: ObjectStore, t: BinderTypes, claim: KObject, pv: KObject): Promise<KObject | undefined> {
  const ns = claim.metadata.namespace ?? '';
  const name = claim.metadata.name ?? '';
  const volumeName = pv.metadata.name ?? '';
  const written = await ignoreNotFound(
    store.update(t.claims, ns, name, (cur) => {
      if (!cur || cur.metadata.uid !== claim.metadata.uid) throw errors.notFound('persistentvolumeclaims', name);
      const spec = (cur.spec ??= {}) as Record<string, unknown>;
      const annotations = { ...cur.metadata.annotations };
      const before = JSON.stringify([spec.volumeName, annotations]);
      if (!spec.volumeName) {
        spec.volumeName = volumeName;
        annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
      }
      annotations[ANN_BIND_COMPLETED] = 'yes';
      if (JSON.stringify([spec.volumeName, annotations]) === before) return cur;
      cur.metadata.annotations = annotations;
      return unpinned(cur);
    }, binderCtx),
  );
  if (!written) return undefined;
  const status = await ignoreNotFound(
    store.update(t.claims, ns, name, (cur) => {
      if (!cur) throw new Error('claim gone');
      const want = { phase: 'Bound', accessModes: get(pv, 'spec', 'accessModes'), capacity: get(pv, 'spec', 'capacity') };
      const s = rec(cur.status) ?? {};
      if (s.phase === want.phase && JSON.stringify([s.accessModes, s.capacity]) === JSON.stringify([want.accessModes, want.capacity])) return cur;
      cur.status = { ...s, ...want };
      return unpinned(cur);
    }, statusCtx),
  );
  return status?.object;
}

/** Upstream updateVolumePhase: status.phase (and an optional message), unless it already says so. */
export async function setVolumePhase(store: ObjectStore, t: BinderTypes, name: string, phase: string, message?: string, now: () => Date = () => new Date()): Promise<KObject | undefined> {
  const r = await ignoreNotFound(
    store.update(t.volumes, '', name, (cur) => {
      if (!cur) throw new Error('volume gone');
      const s = rec(cur.status) ?? {};
      if (s.phase === phase && (s.message ?? undefined) === message) return cur;
      cur.status = { ...s, phase, lastPhaseTransitionTime: s.phase === phase ? s.lastPhaseTransitionTime : now().toISOString().replace(/\.\d{3}Z$/, 'Z') };
      if (message) (cur.status as Record<string, unknown>).message = message;
      else delete (cur.status as Record<string, unknown>).message;
      return unpinned(cur);
    }, statusCtx),
  );
  return r?.object;
}

/** Upstream updateClaimStatus(Lost): a bound claim whose volume went away or was given to another claim. */
export async function setClaimPhase(store: ObjectStore, t: BinderTypes, claim: KObject, phase: string): Promise<void> {
  await ignoreNotFound(
    store.update(t.claims, claim.metadata.namespace ?? '', claim.metadata.name ?? '', (cur) => {
      if (!cur || strAt(cur, 'status', 'phase') === phase) return cur ?? claim;
      cur.status = { ...rec(cur.status), phase };
      return unpinned(cur);
    }, statusCtx),
  );
}

/** Upstream unbindVolume: a volume the controller bound loses its claimRef (and the mark); one its creator pre-bound keeps the ref without its uid. Then Available. */
export async function unbindVolume(store: ObjectStore, t: BinderTypes, pv: KObject): Promise<void> {
  const name = pv.metadata.name ?? '';
  const done = await ignoreNotFound(
    store.update(t.volumes, '', name, (cur) => {
      if (!cur) throw new Error('volume gone');
      const spec = (cur.spec ??= {}) as Record<string, unknown>;
      if (annotation(cur, ANN_BOUND_BY_CONTROLLER)) {
        delete spec.claimRef;
        const annotations = { ...cur.metadata.annotations };
        for (const k of bothKeys(ANN_BOUND_BY_CONTROLLER)) delete annotations[k];
        cur.metadata.annotations = annotations;
      } else if (rec(spec.claimRef)) {
        const ref = { ...rec(spec.claimRef) };
        delete ref.uid;
        spec.claimRef = ref;
      }
      return unpinned(cur);
    }, binderCtx),
  );
  if (done) await setVolumePhase(store, t, name, 'Available');
}
