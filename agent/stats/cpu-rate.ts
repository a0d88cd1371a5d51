/**
 * usageNanoCores from cumulative CPU time, as cAdvisor and containerd compute it: the use between
 * two samples divided by the time between them. A sample is kept as the base of the next rate only
 * once it is at least `minWindowMs` after the kept one, so frequent readers (several scrapers, a
 * test) do not shrink the window to noise; keys not observed in a sweep are forgotten.
 */
export class CpuRates {
  private readonly last = new Map<string, { atMs: number; usageNs: number }>();

  constructor(private readonly minWindowMs = 1000) {}

  /**
   * Records a reading (cumulative core-nanoseconds at a time in ms) and returns the rate in
   * nanocores since the kept sample, or undefined for the first reading of a key (or a counter
   * that went backwards: a restarted container).
   */
  observe(key: string, atMs: number, usageNs: number): number | undefined {
    const prev = this.last.get(key);
    if (!prev || usageNs < prev.usageNs || atMs < prev.atMs) {
      this.last.set(key, { atMs, usageNs });
      return undefined;
    }
    const dt = atMs - prev.atMs;
    if (dt >= this.minWindowMs) this.last.set(key, { atMs, usageNs });
    if (dt <= 0) return undefined;
    return Math.round(((usageNs - prev.usageNs) * 1000) / dt);
  }

  /** Forgets every key not in `keep` (containers and pods that are gone). */
  retain(keep: ReadonlySet<string>): void {
    for (const k of this.last.keys()) if (!keep.has(k)) this.last.delete(k);
  }
}
