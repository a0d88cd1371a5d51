import type { Logger } from 'pino';
import type { Clock } from '../../common/informer/clock';
import type { Informer } from '../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import type { KObject } from '../api/types';
import { rec } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { podCondition, setPodCondition } from '../registry/types/pod-conditions';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('disruption-controller');

/** Upstream stalePodDisruptionTimeout: how long DisruptionTarget=True may stay on a pod that is not terminating. */
export const STALE_DISRUPTION_TIMEOUT_MS = 2 * 60_000;
/** The kubelet's own DisruptionTarget reason (upstream PodReasonTerminationByKubelet): never stale. */
const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/**
 * Milliseconds until a pod's DisruptionTarget condition is stale (0: it is), or undefined when it
 * has none that can be: upstream nonTerminatingPodHasStaleDisruptionCondition. A condition set
 * by an eviction whose delete never came (a refused or failed delete) is stale once it is
 * 2 minutes old while the pod is neither terminating nor terminal.
 */
export function staleDisruptionAfter(pod: KObject, nowMs: number): number | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const cond = podCondition(pod, 'DisruptionTarget');
  const phase = rec(pod.status)?.phase;
  if (!cond || cond.status !== 'True' || cond.reason === TERMINATION_BY_KUBELET || phase === 'Succeeded' || phase === 'Failed') return undefined;
  const since = cond.lastTransitionTime ? Date.parse(cond.lastTransitionTime) : NaN;
  return Math.max(0, (Number.isFinite(since) ? since : 0) + STALE_DISRUPTION_TIMEOUT_MS - nowMs);
}

/** The disruption controller's second queue: pods whose DisruptionTarget condition goes back to False once stale. */
export class StaleDisruptionConditions {
  private readonly queue: WorkQueue;

  constructor(
    private readonly store: ObjectStore,
    private readonly podType: ResourceType,
    private readonly pods: Informer<KObject>,
    private readonly o: { clock: Clock; log: Logger },
  ) {
    this.queue = new WorkQueue({ clock: o.clock });
  }

  /** Called for every pod added or changed: queues it for when its condition turns stale. */
  observe(pod: KObject): void {
    const after = staleDisruptionAfter(pod, this.o.clock.now());
    if (after !== undefined) this.queue.addAfter(`${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, after);
  }

  run(signal: AbortSignal): Promise<void> {
    return runWorkers(this.queue, (key) => this.sync(key), signal, {
      onError: (key, err) => this.o.log.warn({ err, pod: key }, 'clearing a stale DisruptionTarget condition failed; retrying'),
    });
  }

  private async sync(key: string): Promise<void> {
    const pod = this.pods.get(key);
    if (!pod) return;
    const after = staleDisruptionAfter(pod, this.o.clock.now());
    if (after === undefined) return;
    if (after > 0) {
      this.queue.addAfter(key, after);
      return;
    }
    const next = structuredClone(pod);
    setPodCondition(next, { type: 'DisruptionTarget', status: 'False' }, new Date(this.o.clock.now()));
    // At the version read, as upstream's UpdateStatus: a pod changed meanwhile is a conflict, retried.
    await this.store.update(this.podType, pod.metadata.namespace ?? '', pod.metadata.name ?? '', () => next, { ...ctx, subresource: 'status' });
    this.o.log.info({ pod: key }, 'reset stale DisruptionTarget condition to False');
  }
}
