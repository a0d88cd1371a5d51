/** Finding the runtime container behind namespace/pod/container for a checkpoint or a stream. */
import type { Pod } from '../api/core-v1';
import type { RuntimeService } from '../cri';
import { NotFoundError } from '../errors';
import { containerKind } from '../pod/pod-log-lookup';
import { CONTAINER_NAME, POD_UID } from '../pod/runtime-labels';

/** Resolves a pod's container to its current runtime container. */
export interface ContainerLocator {
  /** The container ID of the container's current instance. Rejects a NotFoundError (an AgentError of httpStatus 404) when the namespace, pod or container is unknown or has no instance. */
  containerId(namespace: string, pod: string, container: string, signal?: AbortSignal): Promise<string>;
}

/** Not found: the handler answers 404. */
export class ContainerNotFoundError extends NotFoundError {
  override readonly name = 'ContainerNotFoundError';
  override readonly code = 'SVC_NODE_ERR_CONTAINER_NOT_FOUND';
}

/** What runningContainers reads: the runtime's containers and the pods this node runs. */
export interface RunningContainerSources {
  runtime: Pick<RuntimeService, 'listContainers'>;
  /** The pod a worker runs, by namespace and name (the pod manager's); undefined when none. */
  pods: { podByName(namespace: string, name: string): Pod | undefined };
}

/**
 * The running instance of a pod's container, found as upstream's kubelet finds it for exec,
 * attach, run and checkpoint (findContainer over the runtime's running containers,
 * GetPods(all=false)): one ListContainers filtered by the pod's UID and the container's name and
 * by the running state, the newest attempt kept. The pod's full runtime read (fetchRuntimePod:
 * both lists, the sandbox's status and each container's status) is what logs need (paths, the
 * previous instance), not a stream: it cost every exec four CRI calls before its Exec. A container
 * that is not running is not found (404), as upstream answers "container not found".
 */
export function runningContainers(s: RunningContainerSources): ContainerLocator {
  return {
    async containerId(namespace, podName, container, signal) {
      const pod = s.pods.podByName(namespace, podName);
      if (!pod) throw new ContainerNotFoundError(`pod ${namespace}/${podName} is not running on this node`);
      if (!containerKind(pod, container)) throw new ContainerNotFoundError(`container ${container} is not valid for pod ${podName}`);
      const running = await s.runtime.listContainers({ state: 'CONTAINER_RUNNING', labelSelector: { [POD_UID]: pod.metadata.uid ?? '', [CONTAINER_NAME]: container } }, signal ? { signal } : undefined);
      const newest = running.sort((a, b) => b.metadata.attempt - a.metadata.attempt || b.createdAt - a.createdAt)[0];
      if (!newest) throw new ContainerNotFoundError(`container "${container}" in pod "${podName}" is not running`);
      return newest.id;
    },
  };
}
