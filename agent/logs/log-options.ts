/**
 * The query parameters of a container log request, as upstream's PodLogOptions: follow,
 * previous, timestamps, tailLines, sinceSeconds or sinceTime (not both), limitBytes. Bad values
 * are a LogOptionsError, which the handler answers with 400 and the message.
 */
import { readQueryBool } from '../../common/query-bool';
import { InvalidArgumentError } from '../errors';

export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** Only the last N lines. */
  tailLines?: number;
  /** Only records at or after this time (ms). */
  sinceMs?: number;
  /** Stop after this many bytes. */
  limitBytes?: number;
}

export class LogOptionsError extends InvalidArgumentError {
  override readonly name = 'LogOptionsError';
  override readonly code = 'SVC_NODE_ERR_LOG_OPTIONS';
}

/** follow, previous, timestamps: Go's ParseBool spellings (the Python client sends `True`), empty is true; anything else a 400. */
function bool(q: URLSearchParams, name: string): boolean {
  const b = readQueryBool(q, name);
  if (typeof b !== 'boolean') throw new LogOptionsError(b.error);
  return b;
}

function int(q: URLSearchParams, name: string, min: number): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw new LogOptionsError(`${name}: invalid integer ${JSON.stringify(v)}`);
  const n = Number(v);
  if (n < min) throw new LogOptionsError(`${name}: must be greater than or equal to ${min}`);
  return n;
}

/** Reads the options; `now` resolves sinceSeconds. Throws LogOptionsError. */
export function parseLogOptions(q: URLSearchParams, now: number): LogOptions {
  const o: LogOptions = { follow: bool(q, 'follow'), previous: bool(q, 'previous'), timestamps: bool(q, 'timestamps') };
  const tail = int(q, 'tailLines', 0);
  if (tail !== undefined) o.tailLines = tail;
  const since = int(q, 'sinceSeconds', 1);
  const sinceTime = q.get('sinceTime');
  if (since !== undefined && sinceTime) throw new LogOptionsError('at most one of sinceTime or sinceSeconds may be specified');
  if (since !== undefined) o.sinceMs = now - since * 1000;
  if (sinceTime) {
    const t = Date.parse(sinceTime);
    if (!Number.isFinite(t)) throw new LogOptionsError(`sinceTime: invalid time ${JSON.stringify(sinceTime)}`);
    o.sinceMs = t;
  }
  const limit = int(q, 'limitBytes', 1);
  if (limit !== undefined) o.limitBytes = limit;
  return o;
}
