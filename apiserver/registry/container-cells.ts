/** Upstream layoutContainerCells: container names and images, comma-separated. */
export function containerCells(podSpec: unknown): { names: string; images: string } {
  const containers = (podSpec as { containers?: Array<{ name?: unknown; image?: unknown }> } | undefined)?.containers;
  const list = Array.isArray(containers) ? containers : [];
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { names: list.map((c) => text(c.name)).join(','), images: list.map((c) => text(c.image)).join(',') };
}
