/**
 * Evaluates a pod against a level and version of the Pod Security Standards, as upstream's check
 * registry: baseline checks then restricted ones, each group in the order of its check IDs; at a
 * version, each check runs its newest implementation not newer than the version; the restricted
 * level runs the baseline checks its restricted checks do not override. A version newer than
 * every check, and `latest`, evaluate as the newest version known.
 */
import type { CheckFn, CheckResult, PodView } from './check-helpers';
import { BASELINE_CHECKS, type Check } from './checks-baseline';
import { RESTRICTED_CHECKS } from './checks-restricted';
import type { LevelVersion } from './levels';

/** The reasons a pod fails a policy, in order, with each one's detail (empty when it passes). */
export interface Verdict {
  allowed: boolean;
  reasons: string[];
  details: string[];
}

/** `reason (detail), reason (detail)`: what follows "violates PodSecurity …:" in upstream's messages. */
export function verdictDetail(v: Verdict): string {
  return v.reasons.map((r, i) => (v.details[i] ? `${r} (${v.details[i]})` : r)).join(', ');
}

/** The reasons alone, comma-separated (upstream's ForbiddenReason, used for the namespace-label warnings). */
export function verdictReasons(v: Verdict): string {
  return v.reasons.join(', ');
}

const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const ORDERED = [...[...BASELINE_CHECKS].sort(byId), ...[...RESTRICTED_CHECKS].sort(byId)];

/** The newest minor version any check knows: what `latest` means here. */
export const NEWEST_MINOR = Math.max(...ORDERED.flatMap((c) => c.versions.map((v) => v.minor)));

function atVersion(check: Check, minor: number): Check['versions'][number] | undefined {
  let found: Check['versions'][number] | undefined;
  for (const v of check.versions) if (v.minor <= minor) found = v;
  return found;
}

const cache = new Map<string, CheckFn[]>();

/** The checks a level and version run, in message order (memoised: there are few combinations). */
export function checksFor(lv: LevelVersion): CheckFn[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version.latest ? NEWEST_MINOR : Math.min(lv.version.minor, NEWEST_MINOR);
  const key = `${lv.level}:${minor}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const chosen = ORDERED.map((c) => ({ check: c, impl: atVersion(c, minor) })).filter((x) => x.impl !== undefined);
  const overridden = new Set(lv.level === 'restricted' ? chosen.filter((x) => x.check.level === 'restricted').flatMap((x) => x.impl!.overrides ?? []) : []);
  const fns = chosen.filter((x) => (x.check.level === 'baseline' || lv.level === 'restricted') && !overridden.has(x.check.id)).map((x) => x.impl!.fn);
  cache.set(key, fns);
  return fns;
}

export function evaluate(lv: LevelVersion, pod: PodView): Verdict {
  const reasons: string[] = [];
  const details: string[] = [];
  for (const fn of checksFor(lv)) {
    const r: CheckResult = fn(pod);
    if (!r.allowed) {
      reasons.push(r.reason || 'unknown forbidden reason');
      details.push(r.detail);
    }
  }
  return { allowed: reasons.length === 0, reasons, details };
}
