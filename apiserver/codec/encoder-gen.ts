import { parseGoDuration } from '../api/go-duration';
import { ApiError } from '../api/errors';
import { BackWriter, WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT } from './back-writer';
import type { MessagePlan, ValueCodec } from './plan';
import { writeJson } from './json-back';
import { parseTime } from './time';

/**
 * One encoder function per message, generated from its compiled plan: the fields are unrolled
 * into straight-line code that reads each property by its literal name (so V8 sees one object
 * shape per message and inlines the loads) and writes with a BackWriter, last field first. An
 * interpreter walking the plan paid a switch, a closure-free but megamorphic property read and a
 * call per field; the generated code pays none of them. The source is built only from the
 * schemas compiled into the server (keys and names are quoted with JSON.stringify, field numbers
 * are integers the plan checked), never from request data.
 *
 * Wire behaviour is the plan interpreter's, as Go's generated marshallers write it: fields in
 * ascending number order, absent and null fields not written, embedded structs always written,
 * maps as {key 1, value 2} entries in key order, repeated scalars unpacked, the small wrapper
 * messages (IntOrString, Quantity, Time, FieldsV1/RawExtension) with every field Go writes.
 */

type Json = Record<string, unknown>;

/** Writes obj's message content (no tag, no length) into w. */
export type MessageEncoder = (w: BackWriter, obj: Json) => void;

const table: MessageEncoder[] = [];
const indexOf = new WeakMap<MessagePlan, number>();

/** The generated encoder of a plan (generated once, with every message it contains). */
export function encoderOf(plan: MessagePlan): MessageEncoder {
  const i = indexOf.get(plan);
  if (i !== undefined) return table[i];
  const pending: MessagePlan[] = [];
  const index = (p: MessagePlan): number => {
    let j = indexOf.get(p);
    if (j === undefined) {
      j = table.length;
      table.push(notYet);
      indexOf.set(p, j);
      pending.push(p);
    }
    return j;
  };
  const root = index(plan);
  // A message's code names the others by index, so a schema that contains itself terminates.
  for (let p = pending.pop(); p; p = pending.pop()) table[indexOf.get(p)!] = generate(p, index);
  return table[root];
}

function notYet(): void {
  throw new Error('protobuf: encoder used before it was generated');
}

/** A stored value that does not fit its schema cannot be served as protobuf: a 500 naming the field. */
function bad(message: string, key: string, want: string): ApiError {
  return new ApiError('InternalError', `the object cannot be encoded as protobuf: ${message} field ${key} is not ${want}`);
}

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** intstr.IntOrString {type 1: 0 int / 1 string, intVal 2, strVal 3}: content and length, all three written as Go does. */
function intOrString(w: BackWriter, v: unknown, message: string, key: string): void {
  const isString = typeof v === 'string';
  if (!isString && (typeof v !== 'number' || !Number.isInteger(v))) throw bad(message, key, 'an integer or a string');
  const end = w.mark();
  w.string(isString ? v : '');
  w.byte((3 << 3) | WIRE_BYTES);
  w.int64(isString ? 0 : v);
  w.byte((2 << 3) | WIRE_VARINT);
  w.byte(isString ? 1 : 0);
  w.byte((1 << 3) | WIRE_VARINT);
  w.lengthSince(end);
}

/** resource.Quantity {string 1}: content and length. */
function quantity(w: BackWriter, v: unknown, message: string, key: string): void {
  if (typeof v !== 'string' && typeof v !== 'number') throw bad(message, key, 'a quantity');
  const end = w.mark();
  w.string(String(v));
  w.byte((1 << 3) | WIRE_BYTES);
  w.lengthSince(end);
}

/** meta/v1 Time and MicroTime {seconds 1, nanos 2}: content and length. */
function time(w: BackWriter, v: unknown, micro: boolean, message: string, key: string): void {
  const t = typeof v === 'string' ? parseTime(v, micro) : undefined;
  if (!t) throw bad(message, key, 'an RFC 3339 time');
  const end = w.mark();
  w.int64(t.nanos);
  w.byte((2 << 3) | WIRE_VARINT);
  w.int64(t.seconds);
  w.byte((1 << 3) | WIRE_VARINT);
  w.lengthSince(end);
}

/** meta/v1 Duration {int64 duration 1}: nanoseconds; content and length. */
function duration(w: BackWriter, v: unknown, message: string, key: string): void {
  const ns = typeof v === 'string' ? parseGoDuration(v) : undefined;
  if (ns === undefined) throw bad(message, key, 'a duration');
  const end = w.mark();
  w.int64(ns);
  w.byte((1 << 3) | WIRE_VARINT);
  w.lengthSince(end);
}

/** FieldsV1 and RawExtension: the value as JSON text in bytes field 1; content and length. */
function raw(w: BackWriter, v: unknown): void {
  const end = w.mark();
  writeJson(w, v);
  w.lengthSince(end);
  w.byte((1 << 3) | WIRE_BYTES);
  w.lengthSince(end);
}

function base64(s: string): Buffer {
  return Buffer.from(s, 'base64');
}

/** What generated code reaches through its closure. */
const helpers = { bad, isObj, intOrString, quantity, time, duration, raw, base64 };

/** The code writing a tag (a literal byte when it fits in one). */
function tag(no: number, wire: number): string {
  const t = no * 8 + wire;
  return t < 0x80 ? `w.byte(${t});` : `w.varint(${t});`;
}

interface Site {
  /** The message name and JSON key errors name (quoted). */
  m: string;
  k: string;
  index: (p: MessagePlan) => number;
}

/**
 * The code writing the value held in variable x as field `no` (the value, then its tag). depth
 * keeps the names of nested loop variables apart.
 */
function value(c: ValueCodec, x: string, no: number, s: Site, d: number): string {
  const fail = (want: string) => `throw H.bad(${s.m}, ${s.k}, ${JSON.stringify(want)});`;
  switch (c.k) {
    case 'string':
      return `if (typeof ${x} !== "string") ${fail('a string')} w.string(${x}); ${tag(no, WIRE_BYTES)}`;
    case 'bytes':
      return `if (typeof ${x} !== "string") ${fail('a base64 string')} w.bytes(H.base64(${x})); ${tag(no, WIRE_BYTES)}`;
    case 'int32':
    case 'int64':
      return `if (typeof ${x} !== "number" || !Number.isInteger(${x})) ${fail('an integer')} w.int64(${x}); ${tag(no, WIRE_VARINT)}`;
    case 'bool':
      return `if (typeof ${x} !== "boolean") ${fail('a boolean')} w.byte(${x} ? 1 : 0); ${tag(no, WIRE_VARINT)}`;
    case 'double':
      return `if (typeof ${x} !== "number") ${fail('a number')} w.double(${x}); ${tag(no, WIRE_FIXED64)}`;
    case 'intOrString':
      return `H.intOrString(w, ${x}, ${s.m}, ${s.k}); ${tag(no, WIRE_BYTES)}`;
    case 'quantity':
      return `H.quantity(w, ${x}, ${s.m}, ${s.k}); ${tag(no, WIRE_BYTES)}`;
    case 'time':
    case 'microTime':
      return `H.time(w, ${x}, ${c.k === 'microTime'}, ${s.m}, ${s.k}); ${tag(no, WIRE_BYTES)}`;
    case 'duration':
      return `H.duration(w, ${x}, ${s.m}, ${s.k}); ${tag(no, WIRE_BYTES)}`;
    case 'raw':
      return `H.raw(w, ${x}); ${tag(no, WIRE_BYTES)}`;
    case 'message':
      return `if (!H.isObj(${x})) ${fail('an object')} { const e${d} = w.mark(); E[${s.index(c.plan)}](w, ${x}); w.lengthSince(e${d}); } ${tag(no, WIRE_BYTES)}`;
    case 'map': {
      // Entries in key order (Go's deterministic maps), so written from the last key back.
      const [ks, i, y, e] = [`ks${d}`, `i${d}`, `y${d}`, `e${d}`];
      return (
        `if (!H.isObj(${x})) ${fail('an object')} const ${ks} = Object.keys(${x}).sort(); ` +
        `for (let ${i} = ${ks}.length - 1; ${i} >= 0; ${i}--) { const ${e} = w.mark(); const ${y} = ${x}[${ks}[${i}]]; ` +
        `if (${y} !== undefined && ${y} !== null) { ${value(c.value, y, 2, s, d + 1)} } ` +
        `w.string(${ks}[${i}]); ${tag(1, WIRE_BYTES)} w.lengthSince(${e}); ${tag(no, WIRE_BYTES)} }`
      );
    }
    case 'array': {
      const [i, y, e] = [`i${d}`, `y${d}`, `e${d}`];
      const loop = (itemNo: number) =>
        `for (let ${i} = ${x}.length - 1; ${i} >= 0; ${i}--) { const ${y} = ${x}[${i}]; if (${y} !== undefined && ${y} !== null) { ${value(c.item, y, itemNo, s, d + 1)} } }`;
      const check = `if (!Array.isArray(${x})) ${fail('a list')} `;
      // A wrapped list (ExtraValue) is one message holding the items as its field 1.
      if (c.wrapped) return `${check}{ const ${e} = w.mark(); ${loop(1)} w.lengthSince(${e}); } ${tag(no, WIRE_BYTES)}`;
      return check + loop(no);
    }
  }
}

/** Generates one message's encoder. */
function generate(plan: MessagePlan, index: (p: MessagePlan) => number): MessageEncoder {
  const m = JSON.stringify(plan.name);
  const lines: string[] = [];
  for (let f = plan.fields.length - 1; f >= 0; f--) {
    const field = plan.fields[f];
    if (field.inline) {
      // Go writes an embedded struct even when all its fields are empty; its fields come from obj itself.
      lines.push(`{ const e = w.mark(); E[${index(field.inline)}](w, o); w.lengthSince(e); } ${tag(field.no, WIRE_BYTES)}`);
      continue;
    }
    const k = JSON.stringify(field.key);
    lines.push(`v = o[${k}]; if (v !== undefined && v !== null) { ${value(field.codec!, 'v', field.no, { m, k, index }, 0)} }`);
  }
  const source = `"use strict"; return function encode(w, o) { let v; ${lines.join('\n')} };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the compiled schemas only (see the file comment), for speed
  const factory = new Function('E', 'H', source) as (e: MessageEncoder[], h: typeof helpers) => MessageEncoder;
  return factory(table, helpers);
}
