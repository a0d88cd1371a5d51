import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import { rec, recs, str } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore, WriteContext } from './object-store';
import { setPodCondition } from '../registry/types/pod-conditions';

/** What a Binding asks: the node, and optional pod preconditions and annotations to add. */
export interface Assignment {
  node: string;
  /** Precondition: the pod's uid (Binding metadata.uid). */
  uid?: string;
  /** Precondition: the pod's resourceVersion (Binding metadata.resourceVersion). */
  resourceVersion?: string;
  /** Copied onto the pod's annotations (Binding metadata.annotations). */
  annotations?: Record<string, string>;
}

/** The write sub-resource the store lets change spec.nodeName (see the pod type's validateUpdate). */
export const BINDING_SUBRESOURCE = 'binding';

/**
 * Upstream BindingREST.setPodNodeAndMetadata: binds a pod to a node in one write — spec.nodeName
 * set (once), the binding's annotations added, condition PodScheduled=True. A pod being deleted,
 * already bound, or still gated is refused with 409 on pods/binding, with upstream's messages.
 * ctx.subresource must be 'binding'. Returns the stored pod (or what would be, with dryRun).
 */
export async function assignPod(
  store: ObjectStore,
  podType: ResourceType,
  namespace: string,
  name: string,
  a: Assignment,
  ctx: WriteContext,
  now: () => Date,
): Promise<KObject> {
  const refuse = (why: string) => errors.conflict('pods/binding', name, why);
  const { object } = await store.update(
    podType,
    namespace,
    name,
    (current) => {
      if (!current) throw errors.notFound(podType.resource, name);
      if (a.uid && a.uid !== current.metadata.uid) {
        throw new ApiError('Conflict', `Precondition failed: UID in precondition: ${a.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
      }
      if (current.metadata.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
      const spec = rec(current.spec) ?? (current.spec = {});
      const bound = str(spec.nodeName);
      if (bound) throw refuse(`pod ${name} is already assigned to node "${bound}"`);
      if (recs(spec.schedulingGates).length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
      spec.nodeName = a.node;
      if (a.annotations && Object.keys(a.annotations).length > 0) {
        current.metadata.annotations = { ...(current.metadata.annotations ?? {}), ...a.annotations };
      }
      setPodCondition(current, { type: 'PodScheduled', status: 'True' }, now());
      // A resourceVersion precondition pins the write (409 when stale); otherwise the store retries on races.
      if (a.resourceVersion) current.metadata.resourceVersion = a.resourceVersion;
      else delete current.metadata.resourceVersion;
      return current;
    },
    { ...ctx, subresource: BINDING_SUBRESOURCE },
  );
  return object;
}
