/**
 * Finds the log file of a pod's container for the /containerLogs endpoint (upstream: the
 * kubelet's GetContainerLogs, which resolves the pod, then the container's current or previous
 * instance, then its log path): the pod comes from the pods the manager runs, the container
 * instance from what the runtime holds for the pod.
 */
import type { RuntimeService } from '../cri';
import type { Pod } from '../api/core-v1';
import { latest, previous, type RuntimePod } from './runtime-pod';
import { LogLocateError } from '../logs/container-log-handler';

/** Where a container's log file is. */
export interface ContainerLogLocation {
  path: string;
  containerId: string;
  running: boolean;
}

/** What the runtime holds for a pod (the pod syncer's fetch). Rejects RuntimeError when the runtime cannot be asked. */
export interface RuntimePodReader {
  fetch(uid: string, signal?: AbortSignal): Promise<RuntimePod>;
}

export interface PodLogLookupOptions {
  runtime: RuntimeService;
  runtimeRequestTimeoutMs: number;
  /** The pod a worker runs, by namespace and name; undefined when none. */
  podByName: (namespace: string, name: string) => Pod | undefined;
  /** The runtime side, once the runtime is connected (undefined before). */
  runtimePods: () => RuntimePodReader | undefined;
}

export class PodLogLookup {
  constructor(private readonly o: PodLogLookupOptions) {}

  /**
   * The log file of a pod's container (the previous instance with `previous`). Rejects
   * LogLocateError: 404 for an unknown pod or container, 400 when there is no previous instance
   * (upstream's message), and RuntimeError when the runtime cannot be asked.
   */
  async containerLog(namespace: string, podName: string, container: string, previousInstance: boolean, signal?: AbortSignal): Promise<ContainerLogLocation> {
    const pod = this.o.podByName(namespace, podName);
    if (!pod) throw new LogLocateError(404, `pod ${namespace}/${podName} is not running on this node`);
    // Any of the pod's containers, init containers or ephemeral containers (upstream's kubelet finds them all by name).
    const kind = containerKind(pod, container);
    if (!kind) throw new LogLocateError(404, `container ${container} is not valid for pod ${podName}`);
    const syncer = this.o.runtimePods();
    if (!syncer) throw new LogLocateError(404, 'the container runtime is not connected yet');
    const rp = await syncer.fetch(pod.metadata.uid ?? '', signal);
    const c = previousInstance ? previous(rp, container, kind) : latest(rp, container, kind);
    if (!c) {
      if (previousInstance) throw new LogLocateError(400, `previous terminated container "${container}" in pod "${podName}" not found`);
      throw new LogLocateError(400, `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`);
    }
    if (!c.logPath) throw new LogLocateError(404, `container "${container}" in pod "${podName}" has no log file`);
    return { path: c.logPath, containerId: c.id, running: c.state === 'CONTAINER_RUNNING' };
  }

  /** Whether a container still runs (log followers stop once it does not). */
  async containerRunning(containerId: string, signal?: AbortSignal): Promise<boolean> {
    try {
      const st = await this.o.runtime.containerStatus(containerId, false, { timeoutMs: this.o.runtimeRequestTimeoutMs, ...(signal ? { signal } : {}) });
      return st.status.state === 'CONTAINER_RUNNING';
    } catch {
      return false;
    }
  }
}

/** Which list of the pod names the container (names are unique across the three); undefined when none does. */
export function containerKind(pod: Pod, name: string): 'container' | 'init' | 'ephemeral' | undefined {
  if (pod.spec.containers.some((c) => c.name === name)) return 'container';
  if ((pod.spec.initContainers ?? []).some((c) => c.name === name)) return 'init';
  if ((pod.spec.ephemeralContainers ?? []).some((c) => c.name === name)) return 'ephemeral';
  return undefined;
}
