/**
 * The interval text of Indexed Jobs (status.completedIndexes, status.failedIndexes,
 * successPolicy.rules[].succeededIndexes): increasing decimal indexes separated by commas, three or
 * more consecutive ones written first-last ("1,3-5,7"); upstream's orderedIntervals.
 */

export interface Interval {
  first: number;
  last: number;
}

/** Upstream orderedIntervals.String(): two consecutive indexes stay "a,b", three or more become "a-c". */
export function formatIntervals(intervals: readonly Interval[]): string {
  const out: string[] = [];
  for (const v of intervals) {
    if (v.last === v.first) out.push(String(v.first));
    else if (v.last === v.first + 1) out.push(`${v.first},${v.last}`);
    else out.push(`${v.first}-${v.last}`);
  }
  return out.join(',');
}

/** Intervals of a sorted list of distinct indexes. */
export function intervalsOf(sorted: readonly number[]): Interval[] {
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i === last.last + 1) last.last = i;
    else if (!last || i > last.last) out.push({ first: i, last: i });
  }
  return out;
}

/**
 * Upstream parseIndexesFromString as the controller reads its own status: intervals below
 * completions, anything malformed skipped (the text is what the controller wrote).
 */
export function parseIntervals(text: string | undefined, completions: number): Interval[] {
  if (!text) return [];
  const out: Interval[] = [];
  for (const part of text.split(',')) {
    const [a, b, ...rest] = part.split('-');
    if (rest.length > 0 || a === undefined || !/^\d+$/.test(a) || (b !== undefined && !/^\d+$/.test(b))) continue;
    const first = Number(a);
    const last = Math.min(b === undefined ? first : Number(b), completions - 1);
    if (first > last) continue;
    const prev = out[out.length - 1];
    if (prev && first <= prev.last) continue;
    if (prev && first === prev.last + 1) prev.last = last;
    else out.push({ first, last });
  }
  return out;
}

/** The union of intervals and more sorted indexes (upstream withOrderedIndexes). */
export function withIndexes(intervals: readonly Interval[], sorted: readonly number[]): Interval[] {
  const all: number[] = [];
  for (const v of intervals) for (let i = v.first; i <= v.last; i++) all.push(i);
  const merged = [...new Set([...all, ...sorted])].sort((x, y) => x - y);
  return intervalsOf(merged);
}

export function countIntervals(intervals: readonly Interval[]): number {
  return intervals.reduce((n, v) => n + v.last - v.first + 1, 0);
}

export function inIntervals(intervals: readonly Interval[], i: number): boolean {
  return intervals.some((v) => i >= v.first && i <= v.last);
}

/**
 * Upstream validateIndexesFormat (API validation of succeededIndexes): the number of indexes, or
 * the error text upstream reports after "error parsing succeededIndexes: ".
 */
export function validateIndexesFormat(text: string, completions: number): { total: number } | { error: string } {
  if (text.length === 0) return { total: 0 };
  let lastIndex: number | undefined;
  let total = 0;
  for (const interval of text.split(',')) {
    const limits = interval.split('-');
    if (limits.length > 2) return { error: `the fragment "${interval}" violates the requirement that an index interval can have at most two parts separated by '-'` };
    const nums: number[] = [];
    for (const s of limits) {
      if (!/^[+-]?\d+$/.test(s)) return { error: `cannot convert string to integer for index: "${s}"` };
      const x = Number(s);
      if (x >= completions) return { error: `too large index: "${s}"` };
      if (lastIndex !== undefined && lastIndex >= x) return { error: `non-increasing order, previous: ${lastIndex}, current: ${x}` };
      nums.push(x);
      lastIndex = x;
    }
    total += nums.length === 2 ? nums[1] - nums[0] + 1 : 1;
  }
  return { total };
}
