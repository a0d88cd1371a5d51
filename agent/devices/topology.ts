/**
 * Device choice when the plugin offers no preference: as few NUMA nodes as possible. svc has no
 * topology manager (upstream's would align devices with CPUs and memory); packing is the part
 * that needs nothing else.
 */

/**
 * `count` devices: every one of `mustInclude` first, then from `available` taking the NUMA node
 * with the most free devices first (ties: lower node ID; -1, unknown, counts as a node). IDs keep
 * their order within a node. Returns fewer when there are not enough.
 */
export function packByNuma(available: readonly string[], mustInclude: readonly string[], count: number, numaOf: (id: string) => number): string[] {
  const groups = new Map<number, string[]>();
  for (const id of available) {
    const numa = numaOf(id);
    const g = groups.get(numa);
    if (g) g.push(id);
    else groups.set(numa, [id]);
  }
  const ordered = [...groups.entries()].sort(([na, a], [nb, b]) => b.length - a.length || na - nb).flatMap(([, ids]) => ids);
  return [...mustInclude, ...ordered].slice(0, count);
}
