/**
 * The bounds every JSON value the server decodes or builds stays within, and the one measure of
 * them. A body is at most bodyLimitBytes long (server/decode.ts's readBody), but a value can be
 * larger than its text (YAML aliases, a JSON Patch copying a subtree into itself) and deeper than
 * the code that walks it can recurse; these bounds are checked where such a value is built,
 * before the cost of building it is paid, so that later code can rely on them.
 */

/**
 * Upstream's request body limit (3 MiB, --max-request-bytes), which upstream also uses as JSON
 * Patch's AccumulatedCopySizeLimit. Here it also bounds the size of a patched object and of a
 * YAML document with its aliases expanded.
 */
export const bodyLimitBytes = 3 * 1024 * 1024;

/**
 * Deepest nesting of objects and arrays in a decoded body or a patched object (a scalar is depth
 * 0, `{}` and `[]` are 1). Upstream's JSON decoder allows 10000 levels (Go stacks grow); much of
 * this server walks values recursively (patch engines, managedFields, validation, the yaml
 * library's composer, util.isDeepStrictEqual, structuredClone), and on Node's default stack the
 * shallowest of those overflows near 800 levels (yaml) and 1250 (isDeepStrictEqual). 512 keeps
 * every such walk below 2/3 of its capacity; no built-in object nests beyond a few dozen levels.
 */
export const maxNestingDepth = 512;

/** The size and nesting of a JSON value. */
export interface JsonMeasure {
  /**
   * Length of its compact JSON text in UTF-16 code units, string escapes not counted: its UTF-8
   * size for ASCII text and never more than 3 times below it otherwise.
   */
  size: number;
  /** Nesting depth: 0 for a scalar, 1 for `{}` or `[]`. */
  depth: number;
}

/**
 * Measures v without recursion and without encoding it. Stops as soon as the size passes
 * stopAbove and answers a size above it (the rest unmeasured), so that measuring a value about to
 * be refused costs no more than the bound it breaks.
 */
export function measureJson(v: unknown, stopAbove = Infinity): JsonMeasure {
  let size = 0;
  let depth = 0;
  // Two parallel stacks (values and their depths) rather than one of pairs: no allocation per node.
  const values: unknown[] = [v];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const at = depths.pop()!;
    if (Array.isArray(value)) {
      size += value.length > 0 ? value.length + 1 : 2;
      if (at + 1 > depth) depth = at + 1;
      for (const x of value) {
        values.push(x);
        depths.push(at + 1);
      }
    } else if (typeof value === 'object' && value !== null) {
      const keys = Object.keys(value);
      size += keys.length > 0 ? keys.length + 1 : 2;
      if (at + 1 > depth) depth = at + 1;
      for (const k of keys) {
        size += k.length + 3;
        values.push((value as Record<string, unknown>)[k]);
        depths.push(at + 1);
      }
    } else {
      size += scalarSize(value);
    }
    if (size > stopAbove) break;
  }
  return { size, depth };
}

/** The length of a scalar's JSON text (strings without escapes). */
export function scalarSize(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
      return String(v).length;
    case 'boolean':
      return v ? 4 : 5;
    default:
      return 4; // null
  }
}
