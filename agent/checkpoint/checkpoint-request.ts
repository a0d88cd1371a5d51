/**
 * Parsing of POST /checkpoint/{namespace}/{pod}/{container}[?timeout=N] (spec 4.11). Names are
 * checked before anything else so nothing derived from a hostile name (.., slashes, NUL, very long
 * strings) reaches the filesystem: each must be a valid object name (DNS-1123 label for namespace
 * and container, subdomain for the pod), which excludes every path separator and dot segment.
 *
 * timeout: upstream's kubelet answers a timeout that does not parse as an integer with 404 (a
 * quirk of its error path). svc-node answers 400 with a message naming the parameter instead, and
 * also refuses negative values and values above MAX_TIMEOUT_SECONDS; 0 or unset means the
 * runtime's default, as upstream.
 */
import { AgentError, Kinds } from '../errors';

export const CHECKPOINT_PREFIX = '/checkpoint/';
/** One day: longer than any checkpoint should take, short enough to stay a sane deadline. */
export const MAX_TIMEOUT_SECONDS = 86_400;

export interface CheckpointTarget {
  namespace: string;
  pod: string;
  container: string;
}

export interface CheckpointRequest extends CheckpointTarget {
  /** Seconds; 0 means the runtime's default. */
  timeoutSeconds: number;
}

/** A request that cannot be served; its httpStatus is 400 (bad name or timeout) or 404. */
export class CheckpointRequestError extends AgentError {
  override readonly name = 'CheckpointRequestError';
  override readonly code = 'SVC_NODE_ERR_CHECKPOINT_REQUEST';
  constructor(status: 400 | 404, message: string) {
    super(message, status === 404 ? Kinds.NotFound : Kinds.InvalidArgument);
  }
}

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkName(what: string, value: string, max: number, re: RegExp): void {
  if (value.length > max) throw new CheckpointRequestError(400, `invalid ${what} name: must be no more than ${max} characters`);
  if (!re.test(value)) throw new CheckpointRequestError(400, `invalid ${what} name ${JSON.stringify(value)}: must consist of lower case alphanumeric characters${re === SUBDOMAIN ? ", '-' or '.'" : " or '-'"}, and must start and end with an alphanumeric character`);
}

/** Parses the timeout query value; throws CheckpointRequestError 400 for anything but 0..MAX. */
export function parseTimeout(raw: string | null): number {
  if (raw === null || raw === '') return 0;
  if (!/^[0-9]+$/.test(raw)) throw new CheckpointRequestError(400, `invalid timeout ${JSON.stringify(raw.slice(0, 64))}: must be a non-negative integer number of seconds`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n > MAX_TIMEOUT_SECONDS) throw new CheckpointRequestError(400, `invalid timeout ${raw.slice(0, 64)}: must be at most ${MAX_TIMEOUT_SECONDS} seconds`);
  return n;
}

/** Parses the raw request path and query (pathname still percent-encoded). Throws CheckpointRequestError. */
export function parseCheckpointRequest(pathname: string, query: URLSearchParams): CheckpointRequest {
  if (!pathname.startsWith(CHECKPOINT_PREFIX)) throw new CheckpointRequestError(404, 'expected /checkpoint/{namespace}/{pod}/{container}');
  const parts = pathname.slice(CHECKPOINT_PREFIX.length).split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) throw new CheckpointRequestError(404, 'expected /checkpoint/{namespace}/{pod}/{container}');
  let decoded: string[];
  try {
    decoded = parts.map((p) => decodeURIComponent(p));
  } catch {
    throw new CheckpointRequestError(400, 'malformed percent-encoding in the path');
  }
  const [namespace, pod, container] = decoded as [string, string, string];
  checkName('namespace', namespace, 63, LABEL);
  checkName('pod', pod, 253, SUBDOMAIN);
  checkName('container', container, 63, LABEL);
  return { namespace, pod, container, timeoutSeconds: parseTimeout(query.get('timeout')) };
}
