/** Small statistics helpers for benchmark figures (milliseconds and rates, rounded for printing). */

/** The q-quantile (0 < q <= 1) by nearest rank; NaN for an empty sample. */
export function percentile(sample: readonly number[], q: number): number {
  if (sample.length === 0) return NaN;
  const sorted = [...sample].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

/** The median by nearest rank (the lower middle for an even count). */
export function median(sample: readonly number[]): number {
  return percentile(sample, 0.5);
}

/** Rounds for JSON output: enough digits to compare, not float noise. */
export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** a / b rounded, or null when either side is missing or b is zero (a ratio that cannot be formed). */
export function ratio(a: number | undefined, b: number | undefined): number | null {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return round(a / b, 3);
}
