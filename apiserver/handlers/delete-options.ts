import { ApiError } from '../api/errors';
import { clampToSafeInteger, INT64_MAX, INT64_MIN, int64TextError, MAX_DURATION_SECONDS, parseInt64 } from '../api/integers';
import { isObject } from '../api/types';
import { queryBool } from '../server/request-info';
import type { DeleteOptions } from '../store/object-store';

/** What a DELETE asks for (2.5): the options the store applies, and whether it is a dry run. */
export interface RequestDeleteOptions {
  options: DeleteOptions;
  dryRun: boolean;
}

type Policy = NonNullable<DeleteOptions['propagationPolicy']>;
const POLICIES: readonly Policy[] = ['Background', 'Foreground', 'Orphan'];

/**
 * The DeleteOptions of a DELETE item or collection from its decoded body (the DeleteOptions
 * object, or undefined without a body) and its query parameters, each validated. Every write
 * option of the body counts: dryRun, gracePeriodSeconds, preconditions, propagationPolicy,
 * orphanDependents (`kubectl delete --dry-run=server` sends `{"dryRun":["All"]}` in the body).
 *
 * Where we differ from upstream: kube-apiserver reads the options from the body when there is
 * one and ignores the query then, so a query option next to a body is silently dropped. Here both
 * count, and an option set in both places to different values is a 400 naming it, rather than
 * one of them being dropped without a word.
 */
export function deleteOptionsFrom(query: URLSearchParams, body: Record<string, unknown> | undefined, gates?: ReadonlySet<string>): RequestDeleteOptions {
  const o = body ?? {};
  const out: DeleteOptions = {};
  const grace = agree('gracePeriodSeconds', query.get('gracePeriodSeconds'), parseGracePeriod, given(o.gracePeriodSeconds) ? parseGracePeriod(String(o.gracePeriodSeconds)) : undefined);
  if (grace !== undefined) out.gracePeriodSeconds = grace;
  const policy = agree('propagationPolicy', query.get('propagationPolicy'), parsePolicy, given(o.propagationPolicy) ? parsePolicy(bodyString('propagationPolicy', o.propagationPolicy)) : undefined);
  if (policy !== undefined) out.propagationPolicy = policy;
  const orphan = agree('orphanDependents', query.get('orphanDependents'), () => queryBool(query, 'orphanDependents'), given(o.orphanDependents) ? bodyBool('orphanDependents', o.orphanDependents) : undefined);
  if (orphan !== undefined) {
    out.orphanDependents = orphan;
    if (out.propagationPolicy) throw new ApiError('BadRequest', 'orphanDependents: Invalid value: cannot set both orphanDependents and propagationPolicy');
  }
  if (given(o.preconditions)) out.preconditions = parsePreconditions(o.preconditions);
  const dryRun = dryRunValues(query.getAll('dryRun'), o.dryRun).length > 0;
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // Spec 2.5: alpha, behind AllowUnsafeMalformedObjectDeletion, and alone: no other option may be set.
    if (!gates?.has('AllowUnsafeMalformedObjectDeletion')) {
      throw new ApiError('BadRequest', 'ignoreStoreReadErrorWithClusterBreakingPotential: Forbidden: the AllowUnsafeMalformedObjectDeletion feature gate is not enabled');
    }
    const others = [
      ['dryRun', query.getAll('dryRun').length > 0 || o.dryRun !== undefined],
      ['gracePeriodSeconds', out.gracePeriodSeconds !== undefined],
      ['orphanDependents', out.orphanDependents !== undefined],
      ['preconditions', out.preconditions !== undefined],
      ['propagationPolicy', out.propagationPolicy !== undefined],
    ].filter(([, set]) => set).map(([name]) => name);
    if (others.length > 0) {
      throw new ApiError('BadRequest', `ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: must not be combined with ${others.join(', ')}`);
    }
    out.unsafeIgnoreReadError = true;
  }
  return { options: out, dryRun };
}

/** JSON null means unset, as Go decodes it into a nil pointer. */
function given(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** The option from the query (parsed) and the body (already parsed); both set and different is a 400. */
function agree<T>(name: string, queryText: string | null, parse: (text: string) => T, fromBody: T | undefined): T | undefined {
  if (queryText === null) return fromBody;
  const fromQuery = parse(queryText);
  if (fromBody !== undefined && fromBody !== fromQuery) {
    throw new ApiError('BadRequest', `${name}: Invalid value: ${JSON.stringify(queryText)}: the query parameter contradicts the request body's DeleteOptions (${JSON.stringify(fromBody)})`);
  }
  return fromQuery;
}

function bodyString(name: string, v: unknown): string {
  if (typeof v !== 'string') throw new ApiError('BadRequest', `${name}: Invalid value: ${JSON.stringify(v)}: must be a string`);
  return v;
}

function bodyBool(name: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new ApiError('BadRequest', `${name}: Invalid value: ${JSON.stringify(v)}: must be a boolean`);
  return v;
}

function parsePolicy(text: string): Policy {
  if (!(POLICIES as readonly string[]).includes(text)) {
    throw new ApiError('BadRequest', `propagationPolicy: Unsupported value: "${text}": supported values: "Background", "Foreground", "Orphan"`);
  }
  return text as Policy;
}

function parsePreconditions(v: unknown): NonNullable<DeleteOptions['preconditions']> {
  if (!isObject(v)) throw new ApiError('BadRequest', `preconditions: Invalid value: ${JSON.stringify(v)}: must be an object`);
  const out: NonNullable<DeleteOptions['preconditions']> = {};
  for (const k of ['uid', 'resourceVersion'] as const) {
    if (given(v[k])) out[k] = bodyString(`preconditions.${k}`, v[k]);
  }
  return out;
}

/** dryRun from the query (repeatable) and the body (a list of strings); each must be All (4.4), as upstream's ValidateDryRun. */
function dryRunValues(fromQuery: string[], fromBody: unknown): string[] {
  let body: string[] = [];
  if (given(fromBody)) {
    if (!Array.isArray(fromBody) || fromBody.some((d) => typeof d !== 'string')) {
      throw new ApiError('BadRequest', `dryRun: Invalid value: ${JSON.stringify(fromBody)}: must be a list of strings`);
    }
    body = fromBody as string[];
  }
  const all = [...fromQuery, ...body];
  for (const d of all) {
    if (d !== 'All') throw new ApiError('BadRequest', `dryRun: Unsupported value: "${d}": supported values: "All"`);
  }
  return all;
}

/**
 * gracePeriodSeconds is an int64 (upstream's DeleteOptions): text that is not one is a 400. The
 * deletion deadline is now plus that many seconds, which upstream computes as a time.Duration
 * and which overflows past MAX_DURATION_SECONDS (about 292 years); a longer grace period is
 * refused here rather than wrapped or turned into an invalid date. Negative values stay (the
 * deleter treats them as 0).
 */
function parseGracePeriod(text: string): number {
  const n = parseInt64(text);
  if (n === undefined) {
    const why = int64TextError(text) === 'value out of range' ? `must be between ${INT64_MIN} and ${INT64_MAX}` : 'must be an integer';
    throw new ApiError('BadRequest', `gracePeriodSeconds: Invalid value: "${text}": ${why}`);
  }
  if (n > BigInt(MAX_DURATION_SECONDS)) {
    throw new ApiError('BadRequest', `gracePeriodSeconds: Invalid value: "${text}": must be at most ${MAX_DURATION_SECONDS} (about 292 years)`);
  }
  return clampToSafeInteger(n);
}
