import type { KObject } from '../../api/types';
import { finishedTimeMs } from './job-pods';

/**
 * Upstream's pod failure back-off of the Job controller (pkg/controller/job/backoff_utils.go):
 * per Job, the failures since the last success and when the last one happened; a replacement pod
 * is created only after 10 s doubling per failure, at most 6 minutes (the figures upstream's Job
 * documentation gives). Kept in memory, as upstream: a restarted controller starts from no record.
 */

export const POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 6 * 60_000;

export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureMs?: number;
}

const byFinishTime = (a: KObject, b: KObject) => finishedTimeMs(a) - finishedTimeMs(b);

/** The record after newly finished pods (upstream newBackoffRecord): a success resets it, failures after the last success count. */
export function nextBackoffRecord(prev: BackoffRecord | undefined, succeeded: readonly KObject[], failed: readonly KObject[]): BackoffRecord {
  const rec: BackoffRecord = { ...(prev ?? { failuresAfterLastSuccess: 0 }) };
  const s = [...succeeded].sort(byFinishTime);
  const f = [...failed].sort(byFinishTime);
  if (s.length === 0) {
    if (f.length === 0) return rec;
    return { failuresAfterLastSuccess: rec.failuresAfterLastSuccess + f.length, lastFailureMs: finishedTimeMs(f[f.length - 1]) };
  }
  const out: BackoffRecord = { failuresAfterLastSuccess: 0 };
  const lastSuccess = finishedTimeMs(s[s.length - 1]);
  for (let i = f.length - 1; i >= 0; i--) {
    const t = finishedTimeMs(f[i]);
    if (t <= lastSuccess) break;
    out.lastFailureMs ??= t;
    out.failuresAfterLastSuccess++;
  }
  return out;
}

/** How long until a replacement may be created (upstream getRemainingTimeForFailuresCount); 0 when now. */
export function remainingBackoffMs(rec: BackoffRecord, nowMs: number, baseMs = POD_FAILURE_BACKOFF_MS, maxMs = MAX_POD_FAILURE_BACKOFF_MS): number {
  if (rec.failuresAfterLastSuccess === 0 || rec.lastFailureMs === undefined) return 0;
  let backoff = baseMs;
  for (let i = 1; i < rec.failuresAfterLastSuccess; i++) {
    backoff *= 2;
    if (backoff >= maxMs) {
      backoff = maxMs;
      break;
    }
  }
  const elapsed = nowMs - rec.lastFailureMs;
  return backoff < elapsed ? 0 : backoff - elapsed;
}
