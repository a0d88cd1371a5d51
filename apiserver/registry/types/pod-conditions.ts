import type { KObject } from '../../api/types';
import { isObject } from '../../api/types';
import { ensureRec, rec, recs } from '../obj-access';
import { rfc3339 } from '../../api/time';

/** core/v1 PodCondition as the scheduler and the taint eviction controller write it. */
export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export function podCondition(pod: KObject, type: string): PodCondition | undefined {
  const c = recs(rec(pod.status)?.conditions).find((x) => x.type === type);
  return c as PodCondition | undefined;
}

/**
 * Upstream podutil.UpdatePodCondition, in place: adds or replaces the condition of that type;
 * lastTransitionTime is now when the status changes and kept otherwise. Returns whether anything
 * other than times changed (callers skip the write when not).
 */
export function setPodCondition(pod: KObject, cond: PodCondition, now: Date): boolean {
  const status = ensureRec(pod, 'status');
  const list = Array.isArray(status.conditions) ? (status.conditions as unknown[]) : (status.conditions = []);
  const i = list.findIndex((c) => isObject(c) && c.type === cond.type);
  const next: PodCondition = { type: cond.type, status: cond.status, lastTransitionTime: rfc3339(now) };
  if (cond.reason) next.reason = cond.reason;
  if (cond.message) next.message = cond.message;
  if (i < 0) {
    list.push(next);
    return true;
  }
  const old = list[i] as PodCondition;
  if (old.status === next.status && old.lastTransitionTime) next.lastTransitionTime = old.lastTransitionTime;
  list[i] = next;
  return old.status !== next.status || (old.reason ?? '') !== (next.reason ?? '') || (old.message ?? '') !== (next.message ?? '');
}
