import type { EventHandler } from '../../../common/informer/informer';
import { NAMESPACE_INDEX, type IndexerReader } from '../../../common/informer/indexer';
import { labelSelectorRequirements, selectorMatchesLabels } from '../../api/label-selector';
import type { KObject } from '../../api/types';
import { controllerRefOf } from './controller-ref';

/**
 * Which owners an event about a dependent (a pod, a ControllerRevision) concerns, as upstream's
 * workload controllers route them: the dependent's controller when it is an owner of this kind
 * that still exists with that uid; else, for an orphan, every owner of the namespace whose
 * selector matches it (one of them may adopt it).
 */
export function ownersOf(owners: IndexerReader<KObject>, kind: string, obj: KObject): string[] {
  const ns = obj.metadata.namespace ?? '';
  const ref = controllerRefOf(obj);
  if (ref) {
    if (ref.kind !== kind) return [];
    const key = `${ns}/${ref.name}`;
    return owners.get(key)?.metadata.uid === ref.uid ? [key] : [];
  }
  if (obj.metadata.deletionTimestamp) return [];
  const out: string[] = [];
  for (const owner of owners.byIndex(NAMESPACE_INDEX, ns)) {
    const reqs = labelSelectorRequirements((owner.spec as { selector?: unknown } | undefined)?.selector);
    if (reqs && reqs.length > 0 && selectorMatchesLabels(reqs, obj.metadata.labels)) out.push(`${ns}/${owner.metadata.name}`);
  }
  return out;
}

/**
 * The informer handler of a dependent type: each add, change and delete enqueues the owners it
 * concerns (for a change, those of the old version too: a pod released or relabelled), and tells
 * observed(owner, obj, event) first (the expectations of a controller that keeps them).
 */
export function dependentHandler(
  owners: IndexerReader<KObject>,
  kind: string,
  enqueue: (key: string) => void,
  observed?: (owner: string, obj: KObject, event: 'add' | 'delete') => void,
): EventHandler<KObject> {
  const route = (obj: KObject, event?: 'add' | 'delete') => {
    for (const key of ownersOf(owners, kind, obj)) {
      if (event) observed?.(key, obj, event);
      enqueue(key);
    }
  };
  return {
    onAdd: (obj) => route(obj, obj.metadata.deletionTimestamp ? 'delete' : 'add'),
    onUpdate: (old, obj) => {
      if (old.metadata.resourceVersion === obj.metadata.resourceVersion && old.metadata.resourceVersion !== undefined) return;
      // A pod marked for deletion counts as deleted from then on (upstream's updatePod calls deletePod).
      route(obj, obj.metadata.deletionTimestamp && !old.metadata.deletionTimestamp ? 'delete' : undefined);
      const before = controllerRefOf(old);
      const after = controllerRefOf(obj);
      if (before?.uid !== after?.uid || JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(obj.metadata.labels ?? {})) route(old);
    },
    onDelete: (obj) => route(obj, 'delete'),
  };
}
