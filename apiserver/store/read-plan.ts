import { ApiError } from '../api/errors';
import { decodeContinue, type ContinueToken } from './continue-token';

export interface ListParams {
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
}

/**
 * How a list is read, per the resourceVersion/resourceVersionMatch table of spec 4.6:
 * latest (most recent, a consistent read), any (freshest available), notOlderThan (wait for rv,
 * then read latest), exact (at rv, 410 when compacted), or continue (exact at the token).
 */
export type ReadPlan =
  | { mode: 'latest' }
  | { mode: 'any' }
  | { mode: 'notOlderThan'; revision: number }
  | { mode: 'exact'; revision: number }
  | { mode: 'continue'; token: ContinueToken };

export function planList(p: ListParams): ReadPlan {
  const rv = p.resourceVersion;
  const match = p.resourceVersionMatch;
  const hasLimit = p.limit !== undefined && p.limit > 0;
  if (match !== undefined && match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    throw new ApiError('BadRequest', `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  }
  if (p.continue) {
    if (match) throw new ApiError('BadRequest', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for continue');
    // rv=0 with a continue token is treated as exact-at-token (4.6 "invalid, treated as exact at token").
    if (rv !== undefined && rv !== '' && rv !== '0') {
      throw new ApiError('BadRequest', 'specifying resource version is not allowed when using continue');
    }
    return { mode: 'continue', token: decodeContinue(p.continue) };
  }
  if (match) {
    if (rv === undefined || rv === '') {
      throw new ApiError('BadRequest', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    const n = parseRv(rv);
    if (match === 'Exact') {
      if (n === 0) throw new ApiError('BadRequest', 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      return { mode: 'exact', revision: n };
    }
    return n === 0 ? { mode: 'any' } : { mode: 'notOlderThan', revision: n };
  }
  if (rv === undefined || rv === '') return { mode: 'latest' };
  const n = parseRv(rv);
  if (n === 0) return { mode: 'any' };
  return hasLimit ? { mode: 'exact', revision: n } : { mode: 'notOlderThan', revision: n };
}

/**
 * resourceVersion values are opaque to clients but ours are decimal revisions; anything else is a
 * 400. Upstream parses a uint64 and answers a value beyond its current revision with 504 "Too
 * large resource version"; ours never exceed Number.MAX_SAFE_INTEGER, so a larger one cannot be
 * a version we issued and is refused at once (as text upstream cannot parse is), instead of being
 * rounded to a neighbouring revision.
 */
export function parseRv(rv: string): number {
  if (!/^\d+$/.test(rv)) throw new ApiError('BadRequest', `invalid resource version "${rv}": must be a non-negative integer`);
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) {
    throw new ApiError('BadRequest', `invalid resource version "${rv}": must be a non-negative integer no larger than ${Number.MAX_SAFE_INTEGER}`);
  }
  return n;
}
