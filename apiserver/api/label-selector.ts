import { matches, type Requirement } from './selectors';

/**
 * metav1.LabelSelector objects (a workload's spec.selector, an aggregation rule's selectors) as
 * requirement lists, and matching labels against them. The query-parameter grammar is in
 * selectors.ts; this is the structured form.
 */

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Upstream LabelSelectorAsSelector: matchLabels as equalities and matchExpressions as set
 * requirements; an empty selector is [] (matches everything); a malformed one (no object, an
 * unknown operator, a key that is not a string) is null: upstream's conversion fails and callers
 * match nothing with it.
 */
export function labelSelectorRequirements(sel: unknown): Requirement[] | null {
  if (!isMap(sel)) return null;
  const out: Requirement[] = [];
  if (isMap(sel.matchLabels)) for (const [k, v] of Object.entries(sel.matchLabels)) out.push({ key: k, operator: '=', values: [String(v)] });
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions : []) {
    if (!isMap(e) || typeof e.key !== 'string') return null;
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    if (e.operator === 'In' || e.operator === 'NotIn' || e.operator === 'Exists' || e.operator === 'DoesNotExist') out.push({ key: e.key, operator: e.operator, values });
    else return null;
  }
  return out;
}

/** True when the labels satisfy every requirement; a null (malformed) selector matches nothing. */
export function selectorMatchesLabels(reqs: readonly Requirement[] | null, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!reqs) return false;
  const l = labels ?? {};
  return matches(reqs, (k) => (Object.hasOwn(l, k) ? l[k] : undefined));
}

/**
 * Upstream LabelSelectorAsSelector(sel).String(): the selector in query-parameter syntax
 * (`app=web,tier in (a,b),!legacy`), requirements sorted by key and set values sorted, as a
 * Scale's status.selector and kubectl's Selector column show it. '' for an empty selector; a
 * malformed one is '' too (upstream's conversion fails and callers print nothing).
 */
export function labelSelectorString(sel: unknown): string {
  const reqs = labelSelectorRequirements(sel);
  if (!reqs) return '';
  const byKey = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return byKey.map(requirementString).join(',');
}

/**
 * Upstream metav1.FormatLabelSelector, the Selector column of `kubectl get -o wide` for workloads:
 * the same text as labelSelectorString, "<none>" for an absent or empty selector and "<error>"
 * for a malformed one.
 */
export function formatLabelSelector(sel: unknown): string {
  if (sel === undefined || sel === null) return '<none>';
  if (!labelSelectorRequirements(sel)) return '<error>';
  return labelSelectorString(sel) || '<none>';
}

function requirementString(r: Requirement): string {
  const values = [...r.values].sort();
  switch (r.operator) {
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
    case 'In':
      return `${r.key} in (${values.join(',')})`;
    case 'NotIn':
      return `${r.key} notin (${values.join(',')})`;
    case 'Gt':
      return `${r.key}>${values[0] ?? ''}`;
    case 'Lt':
      return `${r.key}<${values[0] ?? ''}`;
    default:
      return `${r.key}${r.operator}${values[0] ?? ''}`;
  }
}
