import { rec } from '../obj-access';
import { compareQuantities, formatQuantity, parseQuantity, type Quantity } from '../quantity';

/**
 * Resource lists as quota arithmetic needs them (upstream pkg/quota/v1 resources.go): exact sums
 * and differences of quantities (bigint mantissas, so "100m" + "0.2" is "300m" exactly), masks,
 * comparisons, and upstream's rendering in messages.
 */
export type ResourceList = Record<string, Quantity>;

const ZERO: Quantity = { mantissa: 0n, exp: 0, format: 'DecimalSI' };

/** The valid quantities of a JSON resource map; invalid entries are left out. */
export function parseResourceList(v: unknown): ResourceList {
  const out: ResourceList = {};
  for (const [k, q] of Object.entries(rec(v) ?? {})) {
    const parsed = typeof q === 'string' || typeof q === 'number' ? parseQuantity(q) : undefined;
    if (parsed) out[k] = parsed;
  }
  return out;
}

/** The JSON form: every quantity in its canonical string. */
export function formatResourceList(l: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(l).sort()) out[k] = formatQuantity(l[k]);
  return out;
}

export function quantity(n: number | bigint): Quantity {
  return { mantissa: BigInt(n), exp: 0, format: 'DecimalSI' };
}

/** a + b exactly; the format is a's unless a is zero (upstream Quantity.Add). */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const exp = Math.min(a.exp, b.exp);
  const mantissa = a.mantissa * 10n ** BigInt(a.exp - exp) + b.mantissa * 10n ** BigInt(b.exp - exp);
  return { mantissa, exp, format: a.mantissa === 0n ? b.format : a.format };
}

export function negate(q: Quantity): Quantity {
  return { ...q, mantissa: -q.mantissa };
}

export function isZero(q: Quantity): boolean {
  return q.mantissa === 0n;
}

/** Upstream quota.Add: every key of either list, summed. */
export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  for (const [k, q] of Object.entries(b)) out[k] = out[k] ? addQuantities(out[k], q) : q;
  return out;
}

/** Upstream quota.Subtract: every key of either list, a - b (may go negative). */
export function subtract(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  for (const [k, q] of Object.entries(b)) out[k] = addQuantities(out[k] ?? ZERO, negate(q));
  return out;
}

/** Upstream SubtractWithNonNegativeResult: a - b, negative results clamped to 0. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out = subtract(a, b);
  for (const [k, q] of Object.entries(out)) if (q.mantissa < 0n) out[k] = { ...ZERO, format: q.format };
  return out;
}

/** Upstream quota.Mask: only the named keys. */
export function mask(l: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const k of names) if (l[k]) out[k] = l[k];
  return out;
}

export function removeZeros(l: ResourceList): ResourceList {
  const out: ResourceList = {};
  for (const [k, q] of Object.entries(l)) if (!isZero(q)) out[k] = q;
  return out;
}

/** Keys whose quantity is negative (upstream quota.IsNegative). */
export function negatives(l: ResourceList): string[] {
  return Object.keys(l).filter((k) => l[k].mantissa < 0n).sort();
}

/** Upstream quota.LessThanOrEqual: the keys of a (present in b) that exceed b's. */
export function exceeding(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(a)
    .filter((k) => b[k] !== undefined && compareQuantities(a[k], b[k]) > 0)
    .sort();
}

/** Upstream quota.Equals over the JSON forms (missing and zero differ, as upstream). */
export function equalLists(a: ResourceList, b: ResourceList): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] !== undefined && compareQuantities(a[k], b[k]) === 0);
}

/** Upstream prettyPrint: "k=v" sorted by key, joined with commas. */
export function prettyPrint(l: ResourceList): string {
  return Object.keys(l)
    .sort()
    .map((k) => `${k}=${formatQuantity(l[k])}`)
    .join(',');
}
