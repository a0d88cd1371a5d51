/** Finding the runtime container behind namespace/pod/container for a checkpoint. */
import { NotFoundError } from '../errors';
import { LogLocateError, type LogLocator } from '../logs/container-log-handler';

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

/**
 * Adapts the pod manager's log locator (which already resolves the current instance from the pod
 * spec and the runtime); its 400 "waiting to start" becomes 404, as upstream's kubelet answers
 * "container not found" for a container without a runtime instance.
 */
export function locatorFromLogs(logs: Pick<LogLocator, 'containerLog'>): ContainerLocator {
  return {
    async containerId(namespace, pod, container, signal) {
      try {
        const loc = await logs.containerLog(namespace, pod, container, false, signal);
        return loc.containerId;
      } catch (e) {
        if (e instanceof LogLocateError) throw new ContainerNotFoundError(e.message);
        throw e;
      }
    },
  };
}
