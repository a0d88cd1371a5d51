import type { KObject } from '../api/types';
import { get } from '../registry/obj-access';
import { quotaMatches, type QuotaEvaluator } from '../registry/quota/evaluators';
import { add, exceeding, mask, negatives, parseResourceList, prettyPrint, removeZeros, subtractNonNegative, type ResourceList } from '../registry/quota/resource-list';

/**
 * Upstream's quota check of one write (plugin/pkg/admission/resourcequota CheckRequest): the
 * quotas whose status.hard names what the object counts and whose scopes it is in must have
 * room for its usage (on an update, what it adds to the old object's). Pure: the plugin reads
 * the quotas and writes the new usage.
 */

/** The usage one quota is charged: its new status.used and the part this write adds. */
export interface Charge {
  quota: KObject;
  used: ResourceList;
  delta: ResourceList;
}

export type QuotaCheck = { charges: Charge[] } | { refused: string };

export interface CheckedWrite {
  operation: string;
  object: KObject;
  oldObject?: KObject;
}

function hard(q: KObject): ResourceList {
  return parseResourceList(get(q, 'status', 'hard'));
}

function used(q: KObject): ResourceList {
  return parseResourceList(get(q, 'status', 'used'));
}

/** Upstream hasUsageStats: the controller has counted every restricted resource the quota enforces. */
function hasUsageStats(q: KObject, restricted: readonly string[]): boolean {
  const u = used(q);
  return Object.keys(hard(q)).every((r) => !restricted.includes(r) || u[r] !== undefined);
}

/** Checks the write against the namespace's quotas; the charges when it fits, else upstream's reason (the plugin answers 403). */
export function checkQuotas(quotas: readonly KObject[], ev: QuotaEvaluator, w: CheckedWrite, nowMs: number): QuotaCheck {
  const interesting: KObject[] = [];
  for (const q of quotas) {
    if (!quotaMatches(q, ev, w.object)) continue;
    const restricted = ev.matchingResources(Object.keys(hard(q)));
    const why = ev.constraints(restricted, w.object);
    if (why) return { refused: `failed quota: ${q.metadata.name ?? ''}: ${why}` };
    if (!hasUsageStats(q, restricted)) return { refused: `status unknown for quota: ${q.metadata.name ?? ''}, resources: ${[...restricted].sort().join(',')}` };
    interesting.push(q);
  }
  if (interesting.length === 0) return { charges: [] };
  let delta = ev.usage(w.object, nowMs);
  const negative = negatives(delta);
  if (negative.length > 0) return { refused: `quota usage is negative for resource(s): ${negative.join(',')}` };
  // An update is charged what it adds (never negative: shrinking is given back by the controller's recount).
  if (w.operation === 'UPDATE' && w.oldObject?.metadata.resourceVersion) delta = subtractNonNegative(delta, ev.usage(w.oldObject, nowMs));
  delta = removeZeros(delta);
  if (Object.keys(delta).length === 0) return { charges: [] };
  const charges: Charge[] = [];
  for (const q of interesting) {
    const h = hard(q);
    const requested = mask(delta, Object.keys(h));
    const newUsed = add(used(q), requested);
    const over = exceeding(mask(newUsed, Object.keys(requested)), h);
    if (over.length > 0) {
      return {
        refused: `exceeded quota: ${q.metadata.name ?? ''}, requested: ${prettyPrint(mask(requested, over))}, used: ${prettyPrint(mask(used(q), over))}, limited: ${prettyPrint(mask(h, over))}`,
      };
    }
    if (Object.keys(requested).length > 0) charges.push({ quota: q, used: newUsed, delta: requested });
  }
  return { charges };
}
