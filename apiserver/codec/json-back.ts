import type { BackWriter } from './back-writer';

/**
 * JSON text written straight into a BackWriter, backwards, for the values protobuf carries as JSON
 * (FieldsV1, RawExtension: encoder-gen.ts raw). The bytes are exactly those of
 * Buffer.from(JSON.stringify(v)): JSON.stringify built a string that was then measured and copied
 * again, about a third of encoding a small object with managedFields; this walk writes each byte
 * once. What it does not write itself it leaves to JSON.stringify, so that the output never
 * differs: a string with a character that JSON escapes or that is not ASCII (JSON.stringify of
 * that string alone, copied in as UTF-8), and, for the whole value, anything else than plain
 * objects, arrays, strings, finite numbers, booleans and null (undefined, functions, toJSON, class
 * instances, non-finite numbers), or nesting deeper than MAX_DEPTH.
 */

/** Deeper values go to JSON.stringify whole (FieldsV1 of the deepest schemas nests far less). */
const MAX_DEPTH = 100;

/** Longer strings are quoted by JSON.stringify and copied natively (back-writer.ts utf8). */
const LONG_STRING = 256;

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Writes the UTF-8 bytes of JSON.stringify(v) (no length); v must not be undefined. */
export function writeJson(w: BackWriter, v: unknown): void {
  const end = w.mark();
  if (value(w, v, 0)) return;
  // Something this walk leaves to JSON.stringify: forget what it wrote and write that instead.
  w.pos = w.buf.length - end;
  w.utf8(JSON.stringify(v));
}

/** Writes v; false when v (or something inside it) is left to JSON.stringify. */
function value(w: BackWriter, v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      string(w, v);
      return true;
    case 'object':
      if (v === null) {
        w.utf8('null');
        return true;
      }
      if (depth >= MAX_DEPTH) return false;
      return Array.isArray(v) ? array(w, v, depth) : object(w, v as Record<string, unknown>, depth);
    case 'number':
      if (!Number.isFinite(v)) return false;
      // String() and JSON.stringify print a finite number alike (Number::toString; -0 is "0").
      w.utf8(String(v));
      return true;
    case 'boolean':
      w.utf8(v ? 'true' : 'false');
      return true;
    default:
      return false;
  }
}

function object(w: BackWriter, o: Record<string, unknown>, depth: number): boolean {
  // A class instance (a Date's toJSON) or an object of another realm: JSON.stringify decides.
  const proto: unknown = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return false;
  // Own enumerable string keys in JSON.stringify's order (integer-like keys first, then insertion order).
  const keys = Object.keys(o);
  w.byte(CLOSE_BRACE);
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i];
    // A toJSON function is caught here: a function value is left to JSON.stringify.
    if (!value(w, o[k], depth + 1)) return false;
    w.byte(COLON);
    string(w, k);
    if (i > 0) w.byte(COMMA);
  }
  w.byte(OPEN_BRACE);
  return true;
}

function array(w: BackWriter, a: unknown[], depth: number): boolean {
  if (Object.getPrototypeOf(a) !== Array.prototype || (a as { toJSON?: unknown }).toJSON !== undefined) return false;
  w.byte(CLOSE_BRACKET);
  for (let i = a.length - 1; i >= 0; i--) {
    // A hole or undefined is "null" in JSON.stringify's output: left to it, as any other oddity.
    if (!value(w, a[i], depth + 1)) return false;
    if (i > 0) w.byte(COMMA);
  }
  w.byte(OPEN_BRACKET);
  return true;
}

/**
 * A JSON string: copied in quotes while it is printable ASCII without '"' or '\', else (and when
 * longer than a loop is worth) JSON.stringify's form of it.
 */
function string(w: BackWriter, s: string): void {
  const n = s.length;
  if (n > LONG_STRING) {
    w.utf8(JSON.stringify(s));
    return;
  }
  if (w.pos < n + 2) w.room(n + 2);
  const b = w.buf;
  const end = w.pos - 1;
  const start = end - n;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c) break;
    b[start + i] = c;
  }
  if (i < n) {
    w.utf8(JSON.stringify(s));
    return;
  }
  b[end] = QUOTE;
  b[start - 1] = QUOTE;
  w.pos = start - 1;
}
