import type { EventObjectRef, EventRecorder } from '../../../common/events/recorder';
import { isNotFound } from '../../api/errors';
import type { KObject, OwnerReference } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';

/**
 * Upstream's RealPodControl (pkg/controller/controller_utils.go): a workload controller creates
 * pods from its template with a controller reference and deletes the ones it picked, recording
 * SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete on the owner with upstream's
 * messages.
 */

/** What the pod's generated name starts with: the owner's name and a dash (upstream getPodsPrefix). */
export function podNamePrefix(ownerName: string): string {
  return `${ownerName}-`;
}

/**
 * Upstream GetPodFromTemplate: the template's labels, annotations and finalizers, the controller
 * reference, and a copy of its spec; a name or a generateName from the caller.
 */
export function podFromTemplate(template: unknown, ref: OwnerReference, name: { name?: string; generateName?: string }): KObject {
  const tpl = (template ?? {}) as { metadata?: Record<string, unknown>; spec?: unknown };
  const meta = tpl.metadata ?? {};
  const metadata: KObject['metadata'] = { ...name, ownerReferences: [ref] };
  if (meta.labels && typeof meta.labels === 'object') metadata.labels = { ...(meta.labels as Record<string, string>) };
  if (meta.annotations && typeof meta.annotations === 'object') metadata.annotations = { ...(meta.annotations as Record<string, string>) };
  if (Array.isArray(meta.finalizers)) metadata.finalizers = [...(meta.finalizers as string[])];
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(tpl.spec ?? {}) };
}

/** The owner as an event's regarding reference. */
export function refTo(owner: KObject): EventObjectRef {
  return { apiVersion: owner.apiVersion, kind: owner.kind!, namespace: owner.metadata.namespace, name: owner.metadata.name!, uid: owner.metadata.uid, resourceVersion: owner.metadata.resourceVersion };
}

export class PodControl {
  constructor(
    private readonly store: ObjectStore,
    private readonly pods: ResourceType,
    private readonly recorder: EventRecorder,
    private readonly ctx: WriteContext,
  ) {}

  /** Creates the pod; records the outcome on owner and rethrows a failure (the caller counts it). */
  async create(owner: KObject, pod: KObject): Promise<KObject> {
    const ns = owner.metadata.namespace ?? '';
    try {
      const created = await this.store.create(this.pods, ns, pod, this.ctx);
      this.recorder.event(refTo(owner), 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
      return created;
    } catch (err) {
      this.recorder.event(refTo(owner), 'Warning', 'FailedCreate', `Error creating: ${(err as Error).message}`);
      throw err;
    }
  }

  /** Deletes the pod (uid precondition); a pod already gone is success, as upstream. */
  async delete(owner: KObject, pod: KObject): Promise<void> {
    const name = pod.metadata.name!;
    try {
      await this.store.delete(this.pods, pod.metadata.namespace ?? '', name, { preconditions: { uid: pod.metadata.uid } }, this.ctx);
      this.recorder.event(refTo(owner), 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
    } catch (err) {
      if (isNotFound(err)) return;
      this.recorder.event(refTo(owner), 'Warning', 'FailedDelete', `Error deleting: ${(err as Error).message}`);
      throw err;
    }
  }
}

/**
 * Upstream slowStartBatch: runs fn `count` times in batches of 1, 2, 4, … (starting at
 * initialBatchSize), stopping after the first batch with a failure so a controller whose creates
 * are all refused (quota, admission) makes one failing call, not hundreds. Answers how many
 * succeeded and the first error, if any.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: (i: number) => Promise<void>): Promise<{ ok: number; error?: unknown }> {
  let ok = 0;
  let done = 0;
  for (let batch = Math.min(count, Math.max(1, initialBatchSize)); batch > 0; batch = Math.min(2 * batch, count - done)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, (_, j) => fn(done + j)));
    done += batch;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    ok += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { ok, error: failed.reason };
  }
  return { ok };
}
