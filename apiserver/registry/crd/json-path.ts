/**
 * The JSONPath subset CRDs use in additionalPrinterColumns, selectableFields and the scale
 * sub-resource (upstream evaluates them with client-go's jsonpath in `{...}` templates): dotted
 * fields, `[n]` indices and `[?(@.field=="value")]` filters, e.g.
 * `.status.conditions[?(@.type=="Ready")].status`. The first value found is returned.
 */
type Step = { field: string } | { index: number } | { filter: string[]; value: string };

const cache = new Map<string, Step[] | undefined>();

/** The steps of path, or undefined when it is outside the subset. */
export function parseJsonPath(path: string): Step[] | undefined {
  if (cache.has(path)) return cache.get(path);
  const steps: Step[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[\?\(@\.([\w.-]+)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < path.length && (re.lastIndex = at, (m = re.exec(path)))) {
    if (m[1] !== undefined) steps.push({ field: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else steps.push({ filter: m[3].split('.'), value: m[4] ?? m[5] ?? '' });
    at = re.lastIndex;
  }
  const out = at === path.length && path.length > 0 ? steps : undefined;
  cache.set(path, out);
  return out;
}

/** The value at path in obj (undefined when absent or the path is outside the subset). */
export function evalJsonPath(obj: unknown, path: string): unknown {
  const steps = parseJsonPath(path);
  if (!steps) return undefined;
  let v: unknown = obj;
  for (const s of steps) {
    if (v === undefined || v === null) return undefined;
    if ('field' in s) v = typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[s.field] : undefined;
    else if ('index' in s) v = Array.isArray(v) ? v[s.index] : undefined;
    else v = Array.isArray(v) ? v.find((x) => String(dig(x, s.filter)) === s.value) : undefined;
  }
  return v;
}

function dig(v: unknown, path: string[]): unknown {
  let x = v;
  for (const p of path) x = x && typeof x === 'object' ? (x as Record<string, unknown>)[p] : undefined;
  return x;
}
