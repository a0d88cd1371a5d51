import type { Schema } from '../api/schema';
import { isObject } from '../api/types';

/**
 * One step of a field path, spelled as upstream's FieldsV1 keys (structured-merge-diff's
 * serialized PathElement): `f:<name>` a struct field or map key, `k:<json>` the element of a
 * listType map list by its key fields, `v:<json>` the element of a listType set list by its
 * value, `i:<n>` an element by index (read, never produced: no list here is keyed by position).
 *
 * The string is canonical (key fields sorted by name, values in Go's JSON form), so equal
 * elements are equal strings and a field set can key its children by them.
 */
export type PathElement = string;

/** The element of a struct field or map key. */
export const fieldElement = (name: string): PathElement => `f:${name}`;

/** Why a list element cannot be addressed (upstream's wording); the caller adds the path. */
export class ElementError extends Error {}

/**
 * A JSON value as Go's encoding/json writes it: map keys sorted, and <, >, &, U+2028 and U+2029
 * escaped in strings. FieldsV1 keys embed values in this form (k:{"name":"a"}).
 */
export function goJson(v: unknown): string {
  if (typeof v === 'string') return goString(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort();
    return `{${keys.map((k) => `${goString(k)}:${goJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

function goString(s: string): string {
  const j = JSON.stringify(s);
  return /[<>&\u2028\u2029]/.test(j) ? j.replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]) : j;
}

/**
 * The k: element of a listType map list item: its key fields, each from the item or else from
 * the key field's schema default (ContainerPort.protocol defaults to TCP), sorted by name. A key
 * field with neither is left out of the key (upstream: that is a different element).
 */
export function keyElement(item: unknown, keys: readonly string[], itemSchema: Schema | undefined): PathElement {
  if (item === null) throw new ElementError('associative list with keys may not have a null element');
  if (!isObject(item)) throw new ElementError('associative list with keys may not have non-map elements');
  const fields: Array<[string, unknown]> = [];
  for (const k of keys) {
    let v = item[k];
    if (v === undefined && itemSchema?.type === 'object') {
      const ks = itemSchema.properties[k];
      if (ks && ks.type !== 'object' && ks.type !== 'map' && ks.type !== 'array' && ks.type !== 'any') v = ks.default;
    }
    if (v !== undefined) fields.push([k, v]);
  }
  if (fields.length === 0) {
    throw new ElementError(`associative list with keys has an element that omits all key fields ${goJson(keys)} (and doesn't have default values for any key fields)`);
  }
  if (fields.length > 1) fields.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `k:{${fields.map(([k, v]) => `${goString(k)}:${goJson(v)}`).join(',')}}`;
}

/** The v: element of a listType set list item (scalars only, as upstream). */
export function valueElement(item: unknown): PathElement {
  if (item === null) throw new ElementError("associative list without keys has an element that's an explicit null");
  if (Array.isArray(item)) throw new ElementError('not supported: associative list with lists as elements');
  if (isObject(item)) throw new ElementError("associative list without keys has an element that's a map type");
  return `v:${goJson(item)}`;
}

/**
 * The canonical form of a FieldsV1 key read from an object: k: and v: keys are re-encoded (key
 * fields sorted, values in Go's JSON form), so that a set written by a client keys its children
 * as the server's own sets do. Throws on a malformed key; undefined for an unknown element type
 * (upstream skips those).
 */
export function canonicalElement(key: string): PathElement | undefined {
  if (key.length < 2 || key[1] !== ':') throw new ElementError(`key must be 2 characters long: ${key}`);
  if (key[0] === 'f') return key;
  // Stored sets repeat the same keys write after write: remember what each one reads as.
  const known = canonical.get(key);
  if (known !== undefined) return known;
  const c = readElement(key);
  if (c !== undefined) {
    if (canonical.size >= CANONICAL_CACHE_SIZE) canonical.clear();
    canonical.set(key, c);
  }
  return c;
}

const CANONICAL_CACHE_SIZE = 10_000;
const canonical = new Map<string, PathElement>();

function readElement(key: string): PathElement | undefined {
  switch (key[0]) {
    case 'f':
      return key;
    case 'v':
      return `v:${goJson(JSON.parse(key.slice(2)))}`;
    case 'k': {
      const fields: unknown = JSON.parse(key.slice(2));
      if (!isObject(fields)) throw new ElementError(`invalid key: ${key}`);
      return `k:${goJson(fields)}`;
    }
    case 'i': {
      const n = Number(key.slice(2));
      if (!Number.isInteger(n)) throw new ElementError(`invalid index: ${key}`);
      return `i:${n}`;
    }
    default:
      return undefined;
  }
}

const TYPE_RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/**
 * Upstream's PathElement order, which FieldsV1 is written in: field names, then keys, then
 * values, then indices; names by string, keys field by field, values by type (numbers, strings,
 * booleans, lists, maps, null) then value. (Names compare by UTF-16 unit here and by UTF-8 byte
 * upstream: the orders differ only between astral characters and U+E000..U+FFFF.)
 */
export function compareElements(a: PathElement, b: PathElement): number {
  const ta = TYPE_RANK[a[0]] ?? 4;
  const tb = TYPE_RANK[b[0]] ?? 4;
  if (ta !== tb) return ta - tb;
  if (ta === 0) return a < b ? -1 : a > b ? 1 : 0;
  if (ta === 3) return Number(a.slice(2)) - Number(b.slice(2));
  return compareValues(bodyOf(a), bodyOf(b), ta === 1);
}

const bodies = new Map<PathElement, unknown>();

/** The JSON value of a k: or v: element, read once (sorting compares each element many times). */
function bodyOf(pe: PathElement): unknown {
  let v = bodies.get(pe);
  if (v === undefined && !bodies.has(pe)) {
    v = JSON.parse(pe.slice(2));
    if (bodies.size >= CANONICAL_CACHE_SIZE) bodies.clear();
    bodies.set(pe, v);
  }
  return v;
}

function valueRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isObject(v)) return 4;
  return 5;
}

function compareValues(a: unknown, b: unknown, fieldList = false): number {
  if (fieldList && isObject(a) && isObject(b)) return compareFieldLists(a, b);
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return (a as number) - (b as number);
  if (ra === 1) return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  if (ra === 2) return Number(a) - Number(b);
  if (ra === 3) {
    const la = a as unknown[];
    const lb = b as unknown[];
    for (let i = 0; i < Math.min(la.length, lb.length); i++) {
      const c = compareValues(la[i], lb[i]);
      if (c !== 0) return c;
    }
    return la.length - lb.length;
  }
  if (ra === 4) return compareFieldLists(a as Record<string, unknown>, b as Record<string, unknown>);
  return 0;
}

/** Key fields compared pairwise in name order: name first, then value; a shorter list first. */
function compareFieldLists(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    const c = compareValues(a[ka[i]], b[kb[i]]);
    if (c !== 0) return c;
  }
  return ka.length - kb.length;
}

/**
 * An element as upstream prints it in conflict messages (fieldpath.PathElement.String):
 * `.name`, `[name="c",protocol="TCP"]`, `[=value]`, `[0]`.
 */
export function describeElement(pe: PathElement): string {
  const body = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      return `.${body}`;
    case 'k': {
      const fields = JSON.parse(body) as Record<string, unknown>;
      return `[${Object.keys(fields)
        .map((k) => `${k}=${describeValue(fields[k])}`)
        .join(',')}]`;
    }
    case 'v':
      return `[=${describeValue(JSON.parse(body))}]`;
    default:
      return `[${body}]`;
  }
}

/** A path as upstream prints it: its elements' strings joined (`.spec.containers[name="c"].image`). */
export function describePath(path: readonly PathElement[]): string {
  return path.map(describeElement).join('');
}

/** value.ToString: strings quoted, lists bracketed, maps as k=v pairs. */
function describeValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(describeValue).join(',')}]`;
  if (isObject(v)) return Object.keys(v).map((k) => `${k}=${describeValue(v[k])}`).join('');
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
}
