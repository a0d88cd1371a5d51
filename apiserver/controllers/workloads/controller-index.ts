import type { Informer } from '../../../common/informer/informer';
import type { KObject } from '../../api/types';
import { controllerRefOf } from './controller-ref';

/**
 * Upstream's PodControllerUIDIndex (pkg/controller/controller_utils.go), for any type: objects by
 * the uid of their controller, and objects without one under an orphan key per namespace, so a
 * controller finds what it owns and what it may adopt without walking its whole namespace.
 * Informers are shared: every loop calls ensureControllerIndex and the first adds the index.
 */

export const CONTROLLER_UID_INDEX = 'controllerUID';

/** The orphan key of a namespace (upstream OrphanPodIndexKeyForNamespace); a uid never has this shape. */
const orphanKey = (namespace: string): string => `<orphan>/${namespace}`;

export function ensureControllerIndex(informer: Informer<KObject>): void {
  if (informer.hasIndexer(CONTROLLER_UID_INDEX)) return;
  informer.addIndexers({
    [CONTROLLER_UID_INDEX]: (o) => {
      const ref = controllerRefOf(o);
      return [ref?.uid ?? orphanKey(o.metadata.namespace ?? '')];
    },
  });
}

/** The cached objects controlled by ownerUid, then the orphans of the namespace (upstream FilterPodsByOwner with orphans). */
export function ownedAndOrphans(informer: Informer<KObject>, namespace: string, ownerUid: string): KObject[] {
  const owned = informer.store.byIndex(CONTROLLER_UID_INDEX, ownerUid).filter((o) => (o.metadata.namespace ?? '') === namespace);
  return [...owned, ...informer.store.byIndex(CONTROLLER_UID_INDEX, orphanKey(namespace))];
}

/** The cached objects controlled by ownerUid. */
export function ownedBy(informer: Informer<KObject>, ownerUid: string): KObject[] {
  return informer.store.byIndex(CONTROLLER_UID_INDEX, ownerUid);
}
