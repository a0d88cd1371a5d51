/**
 * The pods provider over the agent's PodManager: active pods are those with a worker that is not
 * finished and not in a terminal phase; Get finds any pod a worker runs (active or terminating),
 * as upstream's GetPodByName finds any pod the kubelet knows.
 */
import type { Pod } from '../api/core-v1';
import type { PodResourcesPod, PodsProvider } from './provider';

/** The part of PodManager this provider reads. */
export interface PodSource {
  /** Pods not yet terminated. Never throws. */
  activePods(): Pod[];
  /** The pod a worker runs under namespace/name, or undefined. Never throws. */
  podByName(namespace: string, name: string): Pod | undefined;
}

/** Restartable init containers (sidecars, restartPolicy Always) then app containers, as upstream lists them. */
export function resourceContainers(pod: Pod): string[] {
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name);
  return [...sidecars, ...(pod.spec.containers ?? []).map((c) => c.name)];
}

function view(pod: Pod): PodResourcesPod {
  return {
    namespace: pod.metadata.namespace ?? 'default',
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
    containers: resourceContainers(pod),
  };
}

export class PodManagerPods implements PodsProvider {
  constructor(private readonly source: PodSource) {}

  activePods(): PodResourcesPod[] {
    return this.source.activePods().map(view);
  }

  podByName(namespace: string, name: string): PodResourcesPod | undefined {
    const p = this.source.podByName(namespace, name);
    return p ? view(p) : undefined;
  }
}
