/**
 * The API server's one errors module. Code inside the server throws ApiError with a stable
 * reason; only the HTTP edge turns it into a Status object (spec section 7).
 */

/** Reasons as upstream's metav1.StatusReason names them; clients switch on these strings. */
export type Reason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Timeout'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Expired';

const codes: Record<Reason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
};

/** One entry of details.causes: a field path and what is wrong with it. */
export interface Cause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Cause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  readonly code: number;
  constructor(
    readonly reason: Reason,
    message: string,
    readonly details?: StatusDetails,
    code?: number,
  ) {
    super(message);
    this.code = code ?? codes[reason];
  }

  /** The wire form (metav1.Status). */
  toStatus(): Record<string, unknown> {
    const s: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details && Object.keys(this.details).length > 0) s.details = this.details;
    return s;
  }
}

/** Helpers named as upstream's apimachinery/pkg/api/errors constructors, so messages match what clients expect. */
export const errors = {
  notFound: (resource: string, name: string, group = '') =>
    new ApiError('NotFound', `${qualified(resource, group)} "${name}" not found`, { name, group: group || undefined, kind: resource }),
  alreadyExists: (resource: string, name: string, group = '') =>
    new ApiError('AlreadyExists', `${qualified(resource, group)} "${name}" already exists`, { name, group: group || undefined, kind: resource }),
  conflict: (resource: string, name: string, why: string, group = '') =>
    new ApiError('Conflict', `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${why}`, {
      name,
      group: group || undefined,
      kind: resource,
    }),
  invalid: (kind: string, name: string, causes: Cause[], group = '') =>
    new ApiError(
      'Invalid',
      `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
      { name, group: group || undefined, kind, causes },
    ),
  badRequest: (message: string) => new ApiError('BadRequest', message),
  gone: (message: string) => new ApiError('Expired', message),
  internal: (message: string) => new ApiError('InternalError', `Internal error occurred: ${message}`),
  methodNotAllowed: (message: string) => new ApiError('MethodNotAllowed', message),
  unauthorized: (message = 'Unauthorized') => new ApiError('Unauthorized', message),
  forbidden: (message: string) => new ApiError('Forbidden', message),
};

function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** Field-level error, collected by validators and turned into one 422 by the caller. */
export function fieldError(field: string, message: string, reason = 'FieldValueInvalid'): Cause {
  return { reason, message, field };
}

/**
 * The outcome an error stands for: an ApiError's reason, or the code of storage/'s StorageError
 * ('NotFound', 'AlreadyExists', 'Conflict', ...), read by shape because api/ sits below storage/.
 */
function outcomeOf(err: unknown): string | undefined {
  if (err instanceof ApiError) return err.reason;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** The object does not exist (404 NotFound; storage NotFound), as upstream's apierrors.IsNotFound. */
export function isNotFound(err: unknown): boolean {
  return outcomeOf(err) === 'NotFound';
}

/** A write lost a race or failed a precondition (409 Conflict; storage Conflict), as upstream's apierrors.IsConflict. */
export function isConflict(err: unknown): boolean {
  return outcomeOf(err) === 'Conflict';
}

/** A create found the object already there (409 AlreadyExists; storage AlreadyExists), as upstream's apierrors.IsAlreadyExists. */
export function isAlreadyExists(err: unknown): boolean {
  return outcomeOf(err) === 'AlreadyExists';
}

/** The read's result, or null when the object does not exist; every other failure rejects as before. */
export async function getOrNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}
