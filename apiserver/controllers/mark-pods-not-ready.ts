import { referenceTo } from '../../common/events/object-ref';
import type { EventRecorder } from '../../common/events/recorder';
import { isNotFound } from '../api/errors';
import type { ResourceType } from '../registry/resource-type';
import { podCondition, setPodCondition } from '../registry/types/pod-conditions';
import type { ObjectStore, WriteContext } from '../store/object-store';

/**
 * Upstream's MarkPodsNotReady (node lifecycle controller): when a node stops reporting, every pod
 * bound to it that has a Ready condition gets it turned False (reason and message kept) through
 * pods/status, and, once written, a Warning NodeNotReady "Node is not ready" event. A pod gone
 * meanwhile is skipped; other failures are returned for the caller to log, after every pod was tried.
 */
export async function markPodsNotReady(store: ObjectStore, pods: ResourceType, node: string, o: { ctx: WriteContext; now: () => Date; recorder: EventRecorder }): Promise<unknown[]> {
  const list = await store.list(pods, '', { labelSelector: [], fieldSelector: [{ key: 'spec.nodeName', operator: '=', values: [node] }] });
  const errors: unknown[] = [];
  for (const pod of list.items) {
    const ready = podCondition(pod, 'Ready');
    if (!ready || ready.status === 'False') continue;
    try {
      const { object } = await store.update(
        pods,
        pod.metadata.namespace ?? '',
        pod.metadata.name ?? '',
        (fresh) => {
          if (!fresh || fresh.metadata.uid !== pod.metadata.uid) return fresh ?? pod;
          const cur = podCondition(fresh, 'Ready');
          if (cur) setPodCondition(fresh, { ...cur, status: 'False' }, o.now());
          delete fresh.metadata.resourceVersion;
          return fresh;
        },
        { ...o.ctx, subresource: 'status' },
      );
      if (object.metadata.uid === pod.metadata.uid) o.recorder.event(referenceTo(object), 'Warning', 'NodeNotReady', 'Node is not ready');
    } catch (err) {
      if (!isNotFound(err)) errors.push(err);
    }
  }
  return errors;
}
