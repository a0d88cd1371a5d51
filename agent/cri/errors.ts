/**
 * The one place where CRI failures become agent errors. Every RuntimeService implementation
 * (gRPC client, simulator) rejects with RuntimeError; callers switch on `code` and never on gRPC
 * details. The runtime's own message is kept verbatim because pod status shows it
 * (upstream puts it in CreateContainerError/RunContainerError messages).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { AgentError, Kinds, type ErrorKind } from '../errors';

/** gRPC status names in our spelling, plus UnsupportedVersion for a runtime that is not runtime.v1. */
export type RuntimeErrorCode =
  | 'Canceled'
  | 'Unknown'
  | 'InvalidArgument'
  | 'DeadlineExceeded'
  | 'NotFound'
  | 'AlreadyExists'
  | 'PermissionDenied'
  | 'ResourceExhausted'
  | 'FailedPrecondition'
  | 'Aborted'
  | 'OutOfRange'
  | 'Unimplemented'
  | 'Internal'
  | 'Unavailable'
  | 'DataLoss'
  | 'Unauthenticated'
  | 'UnsupportedVersion';

const byGrpc: Record<number, RuntimeErrorCode> = {
  [GrpcStatus.CANCELLED]: 'Canceled',
  [GrpcStatus.UNKNOWN]: 'Unknown',
  [GrpcStatus.INVALID_ARGUMENT]: 'InvalidArgument',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'DeadlineExceeded',
  [GrpcStatus.NOT_FOUND]: 'NotFound',
  [GrpcStatus.ALREADY_EXISTS]: 'AlreadyExists',
  [GrpcStatus.PERMISSION_DENIED]: 'PermissionDenied',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'ResourceExhausted',
  [GrpcStatus.FAILED_PRECONDITION]: 'FailedPrecondition',
  [GrpcStatus.ABORTED]: 'Aborted',
  [GrpcStatus.OUT_OF_RANGE]: 'OutOfRange',
  [GrpcStatus.UNIMPLEMENTED]: 'Unimplemented',
  [GrpcStatus.INTERNAL]: 'Internal',
  [GrpcStatus.UNAVAILABLE]: 'Unavailable',
  [GrpcStatus.DATA_LOSS]: 'DataLoss',
  [GrpcStatus.UNAUTHENTICATED]: 'Unauthenticated',
};

const toGrpc: Record<RuntimeErrorCode, GrpcStatus> = {
  Canceled: GrpcStatus.CANCELLED,
  Unknown: GrpcStatus.UNKNOWN,
  InvalidArgument: GrpcStatus.INVALID_ARGUMENT,
  DeadlineExceeded: GrpcStatus.DEADLINE_EXCEEDED,
  NotFound: GrpcStatus.NOT_FOUND,
  AlreadyExists: GrpcStatus.ALREADY_EXISTS,
  PermissionDenied: GrpcStatus.PERMISSION_DENIED,
  ResourceExhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  FailedPrecondition: GrpcStatus.FAILED_PRECONDITION,
  Aborted: GrpcStatus.ABORTED,
  OutOfRange: GrpcStatus.OUT_OF_RANGE,
  Unimplemented: GrpcStatus.UNIMPLEMENTED,
  Internal: GrpcStatus.INTERNAL,
  Unavailable: GrpcStatus.UNAVAILABLE,
  DataLoss: GrpcStatus.DATA_LOSS,
  Unauthenticated: GrpcStatus.UNAUTHENTICATED,
  // A runtime never sends this; if we serve it, FAILED_PRECONDITION is the closest meaning.
  UnsupportedVersion: GrpcStatus.FAILED_PRECONDITION,
};

/**
 * The catalogue kind of each runtime code (its HTTP status and the gRPC status an agent edge
 * answers); codes without a kind of their own are internal, and UnsupportedVersion is
 * Unavailable (the runtime cannot serve the agent).
 */
const kindOf: Record<RuntimeErrorCode, ErrorKind> = {
  Canceled: Kinds.Internal,
  Unknown: Kinds.Internal,
  InvalidArgument: Kinds.InvalidArgument,
  DeadlineExceeded: Kinds.DeadlineExceeded,
  NotFound: Kinds.NotFound,
  AlreadyExists: Kinds.AlreadyExists,
  PermissionDenied: Kinds.Forbidden,
  ResourceExhausted: Kinds.ResourceExhausted,
  FailedPrecondition: Kinds.Internal,
  Aborted: Kinds.Conflict,
  OutOfRange: Kinds.InvalidArgument,
  Unimplemented: Kinds.Internal,
  Internal: Kinds.Internal,
  Unavailable: Kinds.Unavailable,
  DataLoss: Kinds.Internal,
  Unauthenticated: Kinds.Unauthorized,
  UnsupportedVersion: Kinds.Unavailable,
};

/**
 * A failed runtime call. Its `code` is the runtime's gRPC status name (the agent's code for this
 * error since before the catalogue; callers switch on it), not an SVC_NODE_ERR_* name.
 */
export class RuntimeError extends AgentError {
  override readonly name = 'RuntimeError';
  constructor(
    override readonly code: RuntimeErrorCode,
    /** The runtime's message, unchanged (or ours when the failure is local). */
    message: string,
    /** The RPC that failed, e.g. "RunPodSandbox"; '' when not tied to one call. */
    readonly rpc = '',
    options?: { cause?: unknown },
  ) {
    super(message, kindOf[code], options);
  }

  /** True when repeating the same call later may succeed (runtime down, slow, or busy). */
  get retriable(): boolean {
    return (
      this.code === 'Unavailable' ||
      this.code === 'DeadlineExceeded' ||
      this.code === 'ResourceExhausted' ||
      this.code === 'Aborted'
    );
  }
}

/** Shape of the errors @grpc/grpc-js hands to callbacks and stream 'error' listeners. */
interface GrpcLikeError {
  code?: unknown;
  details?: unknown;
  message?: unknown;
}

/**
 * Maps a gRPC failure of `rpc` to a RuntimeError. Unknown status numbers become Unknown; a
 * RuntimeError passes through. The message is the status details (the runtime's text).
 */
export function fromGrpcError(err: unknown, rpc: string): RuntimeError {
  if (err instanceof RuntimeError) return err;
  const e = (err ?? {}) as GrpcLikeError;
  const code = typeof e.code === 'number' ? (byGrpc[e.code] ?? 'Unknown') : 'Unknown';
  const details = typeof e.details === 'string' && e.details !== '' ? e.details : undefined;
  const message = details ?? (typeof e.message === 'string' ? e.message : String(err));
  return new RuntimeError(code, message, rpc, { cause: err });
}

/** The gRPC status a server answers for an error thrown by a RuntimeService (used by sim-server). */
export function toGrpcStatus(err: unknown): { code: GrpcStatus; details: string } {
  if (err instanceof RuntimeError) return { code: toGrpc[err.code], details: err.message };
  return { code: GrpcStatus.UNKNOWN, details: err instanceof Error ? err.message : String(err) };
}

export function isRuntimeError(e: unknown, code?: RuntimeErrorCode): e is RuntimeError {
  return e instanceof RuntimeError && (code === undefined || e.code === code);
}

export const isNotFound = (e: unknown): boolean => isRuntimeError(e, 'NotFound');
export const isUnimplemented = (e: unknown): boolean => isRuntimeError(e, 'Unimplemented');
export const isUnavailable = (e: unknown): boolean => isRuntimeError(e, 'Unavailable');
export const isDeadlineExceeded = (e: unknown): boolean => isRuntimeError(e, 'DeadlineExceeded');
export const isCanceled = (e: unknown): boolean => isRuntimeError(e, 'Canceled');

/** Convenience constructors for implementations (simulator) that raise runtime-style errors. */
export const runtimeErrors = {
  notFound: (msg: string, rpc = '') => new RuntimeError('NotFound', msg, rpc),
  alreadyExists: (msg: string, rpc = '') => new RuntimeError('AlreadyExists', msg, rpc),
  invalidArgument: (msg: string, rpc = '') => new RuntimeError('InvalidArgument', msg, rpc),
  failedPrecondition: (msg: string, rpc = '') => new RuntimeError('FailedPrecondition', msg, rpc),
  unimplemented: (msg: string, rpc = '') => new RuntimeError('Unimplemented', msg, rpc),
  unavailable: (msg: string, rpc = '') => new RuntimeError('Unavailable', msg, rpc),
  deadlineExceeded: (msg: string, rpc = '') => new RuntimeError('DeadlineExceeded', msg, rpc),
  canceled: (msg: string, rpc = '') => new RuntimeError('Canceled', msg, rpc),
  unknown: (msg: string, rpc = '') => new RuntimeError('Unknown', msg, rpc),
};
