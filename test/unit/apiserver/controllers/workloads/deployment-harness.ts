/**
 * Helpers for the ReplicaSet and Deployment controller tests, beside the shared harness.ts: events
 * by object, and writes that play the node agent's part (pods bound, running and ready) since no
 * agent runs in-process.
 */
import type { KObject } from '../../../../../apiserver/api/types';
import { controllerRefOf } from '../../../../../apiserver/controllers/workloads/controller-ref';
import { assignPod, BINDING_SUBRESOURCE } from '../../../../../apiserver/store/assign-pod';
import { fakeClock, RecordingRecorder as BaseRecorder } from './harness';
import { adminCtx, waitFor, type Fixture } from '../store-fixture';

/** The shared recording recorder, with the events about one object as "reason: message". */
export class RecordingRecorder extends BaseRecorder {
  about(name: string): string[] {
    return this.events.filter((e) => e.regarding.endsWith(`/${name}`)).map((e) => `${e.reason}: ${e.message}`);
  }
}

export { fakeClock };

export const statusCtx = { ...adminCtx, subresource: 'status' };

export const podTemplate = (labels: Record<string, string>, image = 'nginx:1.27') => ({
  metadata: { labels },
  spec: { containers: [{ name: 'app', image }] },
});

/** Every pod of the namespace controlled by the owner uid (or all pods). */
export async function podsOf(f: Fixture, ownerUid?: string, namespace = 'default'): Promise<KObject[]> {
  const list = await f.store.list(f.type('', 'v1', 'pods'), namespace, { labelSelector: [], fieldSelector: [] });
  return list.items.filter((p) => ownerUid === undefined || controllerRefOf(p)?.uid === ownerUid);
}

/** Plays the agent: the pod bound to node, Running, and Ready since the fake clock's now (or not ready). */
export async function setPodState(f: Fixture, pod: KObject, o: { node?: string; ready?: boolean; phase?: string } = {}): Promise<void> {
  const pods = f.type('', 'v1', 'pods');
  const ns = pod.metadata.namespace ?? 'default';
  const name = pod.metadata.name!;
  if (o.node) await assignPod(f.store, pods, ns, name, { node: o.node }, { ...adminCtx, subresource: BINDING_SUBRESOURCE }, f.clock.now);
  const at = new Date(f.clock.ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await f.store.update(
    pods,
    ns,
    name,
    (cur) => ({
      ...cur!,
      status: {
        phase: o.phase ?? 'Running',
        conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: at }],
      },
    }),
    statusCtx,
  );
}

/** Waits until the object's status satisfies pred (watch-driven, bounded by the fixture). */
export function waitStatus(f: Fixture, group: string, resource: string, name: string, pred: (status: Record<string, any>, o: KObject) => boolean, namespace = 'default'): Promise<KObject | null> {
  return waitFor(f, f.type(group, 'v1', resource), namespace, name, (o) => !!o && pred((o.status ?? {}) as Record<string, any>, o));
}

/** Polls (on the event loop, no timers) until fn returns a value; each try lets pending I/O run first. Bounded by tries. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, tries = 2000): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never: ${what}`);
}
