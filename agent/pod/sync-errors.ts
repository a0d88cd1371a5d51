/**
 * Why a container is not running, in upstream's reason strings (kubelet/container/sync_result.go
 * and images/types.go). Pod status shows them as the waiting reason, exactly spelled, because
 * users and tools (kubectl get pods) key on them.
 */
import { InternalError } from '../errors';

export const Reasons = {
  ContainerCreating: 'ContainerCreating',
  PodInitializing: 'PodInitializing',
  ErrImagePull: 'ErrImagePull',
  ImagePullBackOff: 'ImagePullBackOff',
  ErrImageNeverPull: 'ErrImageNeverPull',
  InvalidImageName: 'InvalidImageName',
  CrashLoopBackOff: 'CrashLoopBackOff',
  CreateContainerConfigError: 'CreateContainerConfigError',
  CreateContainerError: 'CreateContainerError',
  RunContainerError: 'RunContainerError',
  Completed: 'Completed',
  Error: 'Error',
  OOMKilled: 'OOMKilled',
} as const;

/** A failure to bring one container up, carrying the waiting reason pod status shows. */
export class ContainerSyncError extends InternalError {
  override readonly name = 'ContainerSyncError';
  override readonly code = 'SVC_NODE_ERR_CONTAINER_SYNC';
  constructor(
    readonly reason: string,
    message: string,
    /** When a retry makes sense (a back-off's end); unset means the worker's usual retry delay. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Thrown while building a container's config (env, volume references): CreateContainerConfigError. */
export function configError(message: string): ContainerSyncError {
  return new ContainerSyncError(Reasons.CreateContainerConfigError, message);
}
