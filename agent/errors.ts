/**
 * The agent's error catalogue, in the style of undici's lib/core/errors.js: every error svc-node
 * throws extends AgentError, which carries
 *   - `code`, a stable string naming the error ('SVC_NODE_ERR_NOT_FOUND'); callers and logs switch
 *     on it (or on the class), never on the message. A few domain errors keep the codes they had
 *     before the catalogue, because callers already switch on them: RuntimeError's `code` is the
 *     runtime's gRPC status name ('NotFound', 'Unavailable', ...);
 *   - `httpStatus` and `statusReason`, what the agent's HTTPS server answers (a metav1.Status
 *     body, spec section 7);
 *   - `grpcCode`, what the agent's gRPC servers answer (pod resources, device plugin
 *     registration).
 * Code inside the agent throws; the edges convert once: server/status-reply.ts for HTTP (as
 * apiserver/server/respond.ts does for the API server), grpcStatusOf below for gRPC (as
 * containerd's instrumented CRI service converts at its gRPC edge).
 *
 * The kinds (InvalidArgumentError, NotFoundError, ...) are the HTTP/gRPC meanings; each domain
 * error (ConfigError, PodNotFoundError, ...) extends the kind it is, and keeps its own class name
 * and code. A domain error whose kind depends on its data (RuntimeError, ClientError) passes the
 * kind to AgentError's constructor.
 *
 * This file imports nothing: it is the bottom rank of the agent's layers (.dependency-cruiser.cjs).
 */

/** gRPC status codes (google.rpc.Code), as numbers so that this file needs no gRPC import. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

/** The metav1.Status reasons the agent answers with (upstream's StatusReason spellings). */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

/** What an error means at the edges. */
export interface ErrorKind {
  readonly httpStatus: number;
  readonly statusReason: StatusReason;
  readonly grpcCode: GrpcCode;
}

/**
 * The kinds, with the HTTP and gRPC pairs of the usual mapping (google.rpc.Code's HTTP mapping;
 * 405 is UNIMPLEMENTED as grpc-gateway maps it back).
 */
export const Kinds = {
  InvalidArgument: { httpStatus: 400, statusReason: 'BadRequest', grpcCode: GrpcCode.INVALID_ARGUMENT },
  Unauthorized: { httpStatus: 401, statusReason: 'Unauthorized', grpcCode: GrpcCode.UNAUTHENTICATED },
  Forbidden: { httpStatus: 403, statusReason: 'Forbidden', grpcCode: GrpcCode.PERMISSION_DENIED },
  NotFound: { httpStatus: 404, statusReason: 'NotFound', grpcCode: GrpcCode.NOT_FOUND },
  MethodNotAllowed: { httpStatus: 405, statusReason: 'MethodNotAllowed', grpcCode: GrpcCode.UNIMPLEMENTED },
  AlreadyExists: { httpStatus: 409, statusReason: 'AlreadyExists', grpcCode: GrpcCode.ALREADY_EXISTS },
  Conflict: { httpStatus: 409, statusReason: 'Conflict', grpcCode: GrpcCode.ABORTED },
  Expired: { httpStatus: 410, statusReason: 'Expired', grpcCode: GrpcCode.OUT_OF_RANGE },
  ResourceExhausted: { httpStatus: 429, statusReason: 'TooManyRequests', grpcCode: GrpcCode.RESOURCE_EXHAUSTED },
  Internal: { httpStatus: 500, statusReason: 'InternalError', grpcCode: GrpcCode.INTERNAL },
  Unavailable: { httpStatus: 503, statusReason: 'ServiceUnavailable', grpcCode: GrpcCode.UNAVAILABLE },
  DeadlineExceeded: { httpStatus: 504, statusReason: 'Timeout', grpcCode: GrpcCode.DEADLINE_EXCEEDED },
} as const satisfies Record<string, ErrorKind>;

/**
 * The kind of an HTTP status (another server's answer relayed, or a status a request parser
 * chose); 0 (no answer at all) and unknown 5xx are Unavailable and Internal.
 */
export function kindOfHttpStatus(status: number): ErrorKind {
  switch (status) {
    case 0:
      return Kinds.Unavailable;
    case 400:
    case 422:
      return Kinds.InvalidArgument;
    case 401:
      return Kinds.Unauthorized;
    case 403:
      return Kinds.Forbidden;
    case 404:
      return Kinds.NotFound;
    case 405:
      return Kinds.MethodNotAllowed;
    case 409:
      return Kinds.Conflict;
    case 410:
      return Kinds.Expired;
    case 429:
      return Kinds.ResourceExhausted;
    case 503:
      return Kinds.Unavailable;
    case 504:
      return Kinds.DeadlineExceeded;
    default:
      return status >= 400 && status < 500 ? Kinds.InvalidArgument : Kinds.Internal;
  }
}

type Options = { cause?: unknown };

/** The base of every agent error. Thrown as is, it is an internal error. */
export class AgentError extends Error {
  override readonly name: string = 'AgentError';
  /** Stable name of the error; see the file comment. */
  readonly code: string = 'SVC_NODE_ERR';
  /** HTTP status the agent's HTTPS server answers. */
  readonly httpStatus: number;
  /** metav1.Status reason of that answer. */
  readonly statusReason: StatusReason;
  /** gRPC status the agent's gRPC servers answer. */
  readonly grpcCode: GrpcCode;

  constructor(message: string, kind: ErrorKind = Kinds.Internal, options?: Options) {
    super(message, options);
    this.httpStatus = kind.httpStatus;
    this.statusReason = kind.statusReason;
    this.grpcCode = kind.grpcCode;
  }
}

/** A request or input the agent cannot use (HTTP 400, INVALID_ARGUMENT). */
export class InvalidArgumentError extends AgentError {
  override readonly name: string = 'InvalidArgumentError';
  override readonly code: string = 'SVC_NODE_ERR_INVALID_ARGUMENT';
  constructor(message: string, options?: Options) {
    super(message, Kinds.InvalidArgument, options);
  }
}

/** No credentials, or credentials that are not accepted (HTTP 401, UNAUTHENTICATED). */
export class UnauthorizedError extends AgentError {
  override readonly name: string = 'UnauthorizedError';
  override readonly code: string = 'SVC_NODE_ERR_UNAUTHORIZED';
  constructor(message: string, options?: Options) {
    super(message, Kinds.Unauthorized, options);
  }
}

/** An identified caller that may not do this (HTTP 403, PERMISSION_DENIED). */
export class ForbiddenError extends AgentError {
  override readonly name: string = 'ForbiddenError';
  override readonly code: string = 'SVC_NODE_ERR_FORBIDDEN';
  constructor(message: string, options?: Options) {
    super(message, Kinds.Forbidden, options);
  }
}

/** The named thing does not exist here (HTTP 404, NOT_FOUND). */
export class NotFoundError extends AgentError {
  override readonly name: string = 'NotFoundError';
  override readonly code: string = 'SVC_NODE_ERR_NOT_FOUND';
  constructor(message: string, options?: Options) {
    super(message, Kinds.NotFound, options);
  }
}

/** The method is not served on this path (HTTP 405, UNIMPLEMENTED). */
export class MethodNotAllowedError extends AgentError {
  override readonly name: string = 'MethodNotAllowedError';
  override readonly code: string = 'SVC_NODE_ERR_METHOD_NOT_ALLOWED';
  constructor(message: string, options?: Options) {
    super(message, Kinds.MethodNotAllowed, options);
  }
}

/** What is to be created exists already (HTTP 409 AlreadyExists, ALREADY_EXISTS). */
export class AlreadyExistsError extends AgentError {
  override readonly name: string = 'AlreadyExistsError';
  override readonly code: string = 'SVC_NODE_ERR_ALREADY_EXISTS';
  constructor(message: string, options?: Options) {
    super(message, Kinds.AlreadyExists, options);
  }
}

/** Another operation holds what this one needs (HTTP 409 Conflict, ABORTED). */
export class ConflictError extends AgentError {
  override readonly name: string = 'ConflictError';
  override readonly code: string = 'SVC_NODE_ERR_CONFLICT';
  constructor(message: string, options?: Options) {
    super(message, Kinds.Conflict, options);
  }
}

/** Out of a limited resource: devices, a rate limit (HTTP 429, RESOURCE_EXHAUSTED). */
export class ResourceExhaustedError extends AgentError {
  override readonly name: string = 'ResourceExhaustedError';
  override readonly code: string = 'SVC_NODE_ERR_RESOURCE_EXHAUSTED';
  constructor(message: string, options?: Options) {
    super(message, Kinds.ResourceExhausted, options);
  }
}

/** Something the agent depends on cannot be reached now; retrying later may help (HTTP 503, UNAVAILABLE). */
export class UnavailableError extends AgentError {
  override readonly name: string = 'UnavailableError';
  override readonly code: string = 'SVC_NODE_ERR_UNAVAILABLE';
  constructor(message: string, options?: Options) {
    super(message, Kinds.Unavailable, options);
  }
}

/** A deadline passed before the work finished (HTTP 504, DEADLINE_EXCEEDED). */
export class DeadlineExceededError extends AgentError {
  override readonly name: string = 'DeadlineExceededError';
  override readonly code: string = 'SVC_NODE_ERR_DEADLINE_EXCEEDED';
  constructor(message: string, options?: Options) {
    super(message, Kinds.DeadlineExceeded, options);
  }
}

/** The agent failed at something that should have worked (HTTP 500, INTERNAL). */
export class InternalError extends AgentError {
  override readonly name: string = 'InternalError';
  override readonly code: string = 'SVC_NODE_ERR_INTERNAL';
  constructor(message: string, options?: Options) {
    super(message, Kinds.Internal, options);
  }
}

/**
 * The gRPC answer for an error at a gRPC edge: an AgentError's code and message; anything else is
 * INTERNAL with its message.
 */
export function grpcStatusOf(err: unknown): { code: GrpcCode; details: string } {
  if (err instanceof AgentError) return { code: err.grpcCode, details: err.message };
  return { code: GrpcCode.INTERNAL, details: err instanceof Error ? err.message : String(err) };
}
