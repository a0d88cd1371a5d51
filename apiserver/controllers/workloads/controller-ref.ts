import { isNotFound } from '../../api/errors';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import type { KObject, OwnerReference } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';

/**
 * Controller references (metadata.ownerReferences with controller: true) and upstream's
 * ControllerRefManager: an owner claims the objects its selector matches that no other
 * controller owns (adoption), and lets go of the ones it owns that its selector no longer
 * matches (release). Adoption and release write through the store with the object's uid as a
 * precondition, so a pod replaced under the same name is never adopted by mistake.
 */

/** The object's controlling owner reference, if any (upstream metav1.GetControllerOf). */
export function controllerRefOf(obj: KObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** A controller reference to owner (upstream metav1.NewControllerRef): blocks the owner's foreground deletion. */
export function newControllerRef(owner: KObject, apiVersion: string, kind: string): OwnerReference {
  return { apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

export interface ClaimOptions {
  /** The owner's selector (metav1.LabelSelector); a malformed one claims nothing. */
  selector: unknown;
  /** Written into adopted objects. */
  ref: OwnerReference;
  /** Further conditions an object must meet to be the owner's, after the selector (upstream ClaimPods' filters: a StatefulSet's pods must carry its name). */
  filter?: (obj: KObject) => boolean;
  /** The type of the objects claimed (pods, controllerrevisions). */
  type: ResourceType;
  ctx: WriteContext;
  /**
   * Finalizers an adopted object gets with its owner reference and a released one loses (upstream
   * PodControllerRefManager's finalizers: the Job controller's batch.kubernetes.io/job-tracking).
   */
  finalizers?: readonly string[];
}

/**
 * Upstream ClaimObjects: returns the objects the owner controls after adopting matching orphans
 * and releasing owned objects that no longer match. An owner being deleted adopts nothing and
 * releases nothing (upstream: its dependents go with it). Objects being deleted are not adopted.
 */
export async function claim(store: ObjectStore, owner: KObject, objects: readonly KObject[], o: ClaimOptions): Promise<KObject[]> {
  const reqs = labelSelectorRequirements(o.selector);
  const ownerDeleting = !!owner.metadata.deletionTimestamp;
  const out: KObject[] = [];
  for (const obj of objects) {
    const ref = controllerRefOf(obj);
    const matches = reqs !== null && reqs.length > 0 && selectorMatchesLabels(reqs, obj.metadata.labels) && (o.filter?.(obj) ?? true);
    if (ref) {
      if (ref.uid !== owner.metadata.uid) continue;
      if (matches || ownerDeleting) {
        out.push(obj);
        continue;
      }
      await release(store, obj, owner.metadata.uid, o);
      continue;
    }
    if (!matches || ownerDeleting || obj.metadata.deletionTimestamp) continue;
    const adopted = await adopt(store, obj, o);
    if (adopted) out.push(adopted);
  }
  return out;
}

async function adopt(store: ObjectStore, obj: KObject, o: ClaimOptions): Promise<KObject | undefined> {
  try {
    const { object } = await store.update(
      o.type,
      obj.metadata.namespace ?? '',
      obj.metadata.name!,
      (cur) => {
        if (!cur || cur.metadata.uid !== obj.metadata.uid || controllerRefOf(cur) || cur.metadata.deletionTimestamp) throw new SkipClaim();
        cur.metadata.ownerReferences = [...(cur.metadata.ownerReferences ?? []), o.ref];
        if (o.finalizers?.length) cur.metadata.finalizers = [...new Set([...(cur.metadata.finalizers ?? []), ...o.finalizers])];
        return cur;
      },
      o.ctx,
    );
    return object;
  } catch (err) {
    if (err instanceof SkipClaim || isNotFound(err)) return undefined;
    throw err;
  }
}

async function release(store: ObjectStore, obj: KObject, ownerUid: string, o: ClaimOptions): Promise<void> {
  try {
    await store.update(
      o.type,
      obj.metadata.namespace ?? '',
      obj.metadata.name!,
      (cur) => {
        if (!cur || cur.metadata.uid !== obj.metadata.uid) throw new SkipClaim();
        const refs = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid);
        if (refs.length) cur.metadata.ownerReferences = refs;
        else delete cur.metadata.ownerReferences;
        if (o.finalizers?.length) {
          const rest = (cur.metadata.finalizers ?? []).filter((f) => !o.finalizers!.includes(f));
          if (rest.length) cur.metadata.finalizers = rest;
          else delete cur.metadata.finalizers;
        }
        return cur;
      },
      o.ctx,
    );
  } catch (err) {
    if (err instanceof SkipClaim || isNotFound(err)) return;
    throw err;
  }
}

/** The object changed identity or owner between the cache and the write: leave it alone (upstream's adoption precondition). */
class SkipClaim extends Error {}
