/** HPA status helpers: conditions set as upstream's setCondition (the transition time moves only with the status) and the change test before a write. */
import { recs } from '../../registry/obj-access';
import type { Condition } from './scaling-behavior';

/** Sets a condition in status.conditions (kept in AbleToScale, ScalingActive, ScalingLimited order of first appearance). */
export function setCondition(status: Record<string, unknown>, type: string, c: Condition, stamp: string): void {
  const list = recs(status.conditions);
  const existing = list.find((x) => x.type === type);
  if (existing) {
    if (existing.status !== c.status) existing.lastTransitionTime = stamp;
    existing.status = c.status;
    existing.reason = c.reason;
    existing.message = c.message;
  } else {
    list.push({ type, status: c.status, lastTransitionTime: stamp, reason: c.reason, message: c.message });
  }
  status.conditions = list;
}

/** Whether the status differs from the stored one (upstream writes only then). */
export function statusChanged(old: Record<string, unknown>, next: Record<string, unknown>): boolean {
  return JSON.stringify(normalize(old)) !== JSON.stringify(normalize(next));
}

function normalize(s: Record<string, unknown>): unknown {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b)));
}
