import { ApiError } from '../api/errors';
import type { ObjectSchema } from '../api/schema';
import { planOf, type MessagePlan, type ValueCodec } from './plan';
import { parseTime } from './time';
import { WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT, Writer } from './writer';

/**
 * JSON-shaped objects to protobuf messages, walking the schema. Fields are written in ascending
 * number order, as Go's generated marshallers write them; absent and null fields are not written
 * (a Go reader sees its zero value either way). Maps are repeated {key 1, value 2} entries in
 * key order, repeated scalars are unpacked (proto2).
 */

type Json = Record<string, unknown>;

/** The message bytes of obj (no envelope). */
export function encodeProto(schema: ObjectSchema, obj: Json): Buffer {
  const w = new Writer();
  encodeMessage(w, planOf(schema), obj);
  return w.finish();
}

/** Writes obj's fields as the message plan describes (the caller frames it). */
export function encodeMessage(w: Writer, plan: MessagePlan, obj: Json): void {
  for (const f of plan.fields) {
    if (f.inline) {
      // Go writes an embedded struct even when all its fields are empty.
      w.tag(f.no, WIRE_BYTES);
      const mark = w.fork();
      encodeMessage(w, f.inline, obj);
      w.join(mark);
      continue;
    }
    const v = obj[f.key];
    if (v === undefined || v === null) continue;
    encodeField(w, f.no, f.codec!, v, plan, f.key);
  }
}

function encodeField(w: Writer, no: number, c: ValueCodec, v: unknown, plan: MessagePlan, key: string): void {
  switch (c.k) {
    case 'array': {
      if (!Array.isArray(v)) throw unencodable(plan, key, 'a list');
      if (c.wrapped) {
        w.tag(no, WIRE_BYTES);
        const mark = w.fork();
        for (const x of v) if (x !== null && x !== undefined) encodeField(w, 1, c.item, x, plan, key);
        w.join(mark);
        return;
      }
      for (const x of v) if (x !== null && x !== undefined) encodeField(w, no, c.item, x, plan, key);
      return;
    }
    case 'map': {
      if (!isObject(v)) throw unencodable(plan, key, 'an object');
      // Sorted by key, as Go's generated marshallers write maps (deterministic bytes).
      for (const k of Object.keys(v).sort()) {
        w.tag(no, WIRE_BYTES);
        const mark = w.fork();
        w.tag(1, WIRE_BYTES);
        w.string(k);
        const x = v[k];
        if (x !== null && x !== undefined) encodeField(w, 2, c.value, x, plan, key);
        w.join(mark);
      }
      return;
    }
    case 'message': {
      if (!isObject(v)) throw unencodable(plan, key, 'an object');
      w.tag(no, WIRE_BYTES);
      const mark = w.fork();
      encodeMessage(w, c.plan, v);
      w.join(mark);
      return;
    }
    case 'raw': {
      // FieldsV1 and RawExtension: the value as JSON text in bytes field 1.
      w.tag(no, WIRE_BYTES);
      const mark = w.fork();
      w.tag(1, WIRE_BYTES);
      w.string(JSON.stringify(v));
      w.join(mark);
      return;
    }
    default:
      encodeScalar(w, no, c.k, v, plan, key);
  }
}

function encodeScalar(w: Writer, no: number, k: string, v: unknown, plan: MessagePlan, key: string): void {
  switch (k) {
    case 'string':
      if (typeof v !== 'string') throw unencodable(plan, key, 'a string');
      w.tag(no, WIRE_BYTES);
      w.string(v);
      return;
    case 'bytes':
      if (typeof v !== 'string') throw unencodable(plan, key, 'a base64 string');
      w.tag(no, WIRE_BYTES);
      w.bytes(Buffer.from(v, 'base64'));
      return;
    case 'int32':
    case 'int64':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw unencodable(plan, key, 'an integer');
      w.tag(no, WIRE_VARINT);
      w.int64(v);
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw unencodable(plan, key, 'a boolean');
      w.tag(no, WIRE_VARINT);
      w.uint32(v ? 1 : 0);
      return;
    case 'double':
      if (typeof v !== 'number') throw unencodable(plan, key, 'a number');
      w.tag(no, WIRE_FIXED64);
      w.double(v);
      return;
    case 'intOrString':
      return encodeIntOrString(w, no, v, plan, key);
    case 'quantity': {
      if (typeof v !== 'string' && typeof v !== 'number') throw unencodable(plan, key, 'a quantity');
      w.tag(no, WIRE_BYTES);
      const mark = w.fork();
      w.tag(1, WIRE_BYTES);
      w.string(String(v));
      w.join(mark);
      return;
    }
    default: {
      const t = typeof v === 'string' ? parseTime(v, k === 'microTime') : undefined;
      if (!t) throw unencodable(plan, key, 'an RFC 3339 time');
      w.tag(no, WIRE_BYTES);
      const mark = w.fork();
      w.tag(1, WIRE_VARINT);
      w.int64(t.seconds);
      w.tag(2, WIRE_VARINT);
      w.int64(t.nanos);
      w.join(mark);
    }
  }
}

/** intstr.IntOrString {type 1: 0 int / 1 string, intVal 2, strVal 3}, all three written as Go does. */
function encodeIntOrString(w: Writer, no: number, v: unknown, plan: MessagePlan, key: string): void {
  if (typeof v !== 'string' && (typeof v !== 'number' || !Number.isInteger(v))) throw unencodable(plan, key, 'an integer or a string');
  w.tag(no, WIRE_BYTES);
  const mark = w.fork();
  w.tag(1, WIRE_VARINT);
  w.uint32(typeof v === 'string' ? 1 : 0);
  w.tag(2, WIRE_VARINT);
  w.int64(typeof v === 'number' ? v : 0);
  w.tag(3, WIRE_BYTES);
  w.string(typeof v === 'string' ? v : '');
  w.join(mark);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A stored object that does not fit its schema cannot be served as protobuf. */
function unencodable(plan: MessagePlan, key: string, want: string): ApiError {
  return new ApiError('InternalError', `the object cannot be encoded as protobuf: ${plan.name} field ${key} is not ${want}`);
}
