import { labelSelectorRequirements } from '../api/label-selector';

/**
 * Upstream metav1.FormatLabelSelector, the SELECTOR column of `kubectl get -o wide` for workloads:
 * requirements sorted by key, matchLabels as k=v, In/NotIn as "k in (a,b)", Exists as "k",
 * DoesNotExist as "!k"; "<none>" for an empty or absent selector, "<error>" for a malformed one.
 */
export function formatLabelSelector(sel: unknown): string {
  if (sel === undefined || sel === null) return '<none>';
  const reqs = labelSelectorRequirements(sel);
  if (reqs === null) return '<error>';
  const parts = [...reqs]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => {
      const values = [...r.values].sort().join(',');
      switch (r.operator) {
        case '=':
          return `${r.key}=${r.values[0] ?? ''}`;
        case 'In':
          return `${r.key} in (${values})`;
        case 'NotIn':
          return `${r.key} notin (${values})`;
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
        default:
          return `${r.key}${r.operator}${values}`;
      }
    });
  return parts.length ? parts.join(',') : '<none>';
}

/** Upstream layoutContainerCells: container names and images, comma-separated. */
export function containerCells(podSpec: unknown): { names: string; images: string } {
  const containers = (podSpec as { containers?: Array<{ name?: unknown; image?: unknown }> } | undefined)?.containers;
  const list = Array.isArray(containers) ? containers : [];
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { names: list.map((c) => text(c.name)).join(','), images: list.map((c) => text(c.image)).join(',') };
}
