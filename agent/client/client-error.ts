/**
 * The agent's one error type for API calls: every failure (an HTTP answer with a Status body, a
 * refused or timed-out connection, a malformed answer) becomes a ClientError carrying the HTTP
 * status (0 when no answer arrived) and the Status reason and message, so callers switch on
 * `status`/`reason` and never on transport details. Its catalogue kind follows the status (a 404
 * is a NotFound, no answer is Unavailable).
 */
import { isObject } from '../../apiserver/api/types';
import { AgentError, kindOfHttpStatus } from '../errors';

/** Reasons for failures that never reached an HTTP answer. */
export type TransportReason = 'ConnectionFailed' | 'Timeout' | 'InvalidResponse';

export interface ClientErrorDetails {
  name?: string;
  kind?: string;
  group?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

export class ClientError extends AgentError {
  override readonly name: string = 'ClientError';
  override readonly code: string = 'SVC_NODE_ERR_API_CALL';
  constructor(
    /** HTTP status code of the API server's answer, or 0 when the request got no HTTP answer. */
    readonly status: number,
    /** metav1.Status reason (NotFound, Conflict, ...) or a TransportReason. */
    readonly reason: string,
    message: string,
    readonly details?: ClientErrorDetails,
    options?: { cause?: unknown },
  ) {
    super(message, kindOfHttpStatus(status), options);
  }

  /** True when the request may succeed if simply repeated later (server down, overloaded, timed out). */
  get retriable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/**
 * The requested resourceVersion is no longer available (HTTP 410, or a watch ERROR event with
 * code 410): the caller must drop what it holds and list again (spec section 7).
 */
export class GoneError extends ClientError {
  override readonly name = 'GoneError';
  override readonly code = 'SVC_NODE_ERR_API_GONE';
}

/** Builds the error for a non-2xx answer from its code and (maybe) Status body. */
export function errorFromStatus(code: number, body: unknown, fallbackText = ''): ClientError {
  let reason = reasonForCode(code);
  let message = fallbackText.trim() || `the server answered HTTP ${code}`;
  let details: ClientErrorDetails | undefined;
  let effectiveCode = code;
  if (isObject(body) && body['kind'] === 'Status') {
    if (typeof body['reason'] === 'string' && body['reason'] !== '') reason = body['reason'];
    if (typeof body['message'] === 'string' && body['message'] !== '') message = body['message'];
    if (typeof body['code'] === 'number' && body['code'] > 0) effectiveCode = body['code'];
    if (isObject(body['details'])) details = body['details'];
  }
  if (effectiveCode === 410) return new GoneError(effectiveCode, reason, message, details);
  return new ClientError(effectiveCode, reason, message, details);
}

/** Upstream's reason for a bare HTTP code (apimachinery errors.NewGenericServerResponse). */
function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 504:
      return 'Timeout';
    default:
      return code >= 500 ? 'InternalError' : 'Unknown';
  }
}

/** Wraps a failure that produced no HTTP answer (refused, reset, TLS, timeout). */
export function transportError(err: unknown, what: string): ClientError {
  const e = err as { code?: string; name?: string; message?: string };
  const timeout = e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT';
  const detail = e?.code && !String(e.message ?? '').includes(e.code) ? `${e.code}: ${e.message}` : (e?.message ?? String(err));
  return new ClientError(0, timeout ? 'Timeout' : 'ConnectionFailed', `${what}: ${detail}`, undefined, { cause: err });
}

export function isNotFound(e: unknown): boolean {
  return e instanceof ClientError && e.status === 404;
}

export function isAlreadyExists(e: unknown): boolean {
  return e instanceof ClientError && e.status === 409 && e.reason === 'AlreadyExists';
}

export function isConflict(e: unknown): boolean {
  return e instanceof ClientError && e.status === 409 && e.reason !== 'AlreadyExists';
}

export function isGone(e: unknown): e is GoneError {
  return e instanceof GoneError;
}

/** The error a request rejects with when its caller's signal aborted (what fetch and undici throw). */
export function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

/** True for the AbortError of an aborted AbortSignal (the caller is shutting down, not a failure). */
export function isAbort(e: unknown): boolean {
  return (e as { name?: string } | undefined)?.name === 'AbortError';
}
