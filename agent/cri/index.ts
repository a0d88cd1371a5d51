/** The agent's CRI seam: import from here outside agent/cri. */
export type { CallOptions, RuntimeService } from './runtime-service';
export type { StreamExecRequest, StreamAttachRequest, StreamPortForwardRequest, LocalStreamTarget } from './stream-types';
export { CRI_API_VERSION } from './runtime-service';
export * from './types';
export {
  RuntimeError,
  type RuntimeErrorCode,
  isRuntimeError,
  isNotFound,
  isUnimplemented,
  isUnavailable,
  isDeadlineExceeded,
  isCanceled,
} from './errors';
export { createRuntimeService, type RuntimeServiceOptions } from './factory';
export { GrpcRuntimeService, type GrpcRuntimeOptions } from './grpc-client';
export { Simulator } from './simulator';
export type { SimulatorOptions, ContainerBehaviour, ExecHandler, ExecResultSpec, SimImageSpec } from './sim-options';
export { RuntimeHealth, type RuntimeHealthOptions, type RuntimeHealthSnapshot } from './runtime-health';
export { parseEndpoint, type Endpoint } from './endpoint';
export { normalizeImageRef, parseImageRef, isImageId } from './image-ref';
