import { formatGoDuration } from '../api/go-duration';
import type { ObjectSchema } from '../api/schema';
import { planOf, type MessagePlan, type ScalarKind, type ValueCodec } from './plan';
import { protobufError, Reader } from './reader';
import { formatTime } from './time';
import { WIRE_BYTES, WIRE_FIXED64, WIRE_VARINT } from './back-writer';

/**
 * Protobuf messages to JSON-shaped objects, walking the schema: the object upstream's Go decoder
 * and JSON encoder would give. Unknown field numbers are skipped (as upstream). A zero scalar
 * ("", 0, false) is dropped unless the schema marks it keepZero (Go writes every non-pointer
 * field, its JSON omits the omitempty ones); an empty Time is dropped (Go's JSON writes null).
 * Messages present on the wire become objects even when empty, as Go's JSON writes structs.
 */

type Json = Record<string, unknown>;

/** Nested messages deeper than this are refused (the schemas nest far less). */
const MAX_DEPTH = 64;

/** Decodes one message (no envelope) into its JSON shape: into `out` (whose keys the message's fields override), a new object by default. */
export function decodeProto(schema: ObjectSchema, bytes: Uint8Array, out: Json = {}): Json {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return decodeProtoRange(schema, buf, 0, buf.length, out);
}

/** As decodeProto, for the message in buf[start, end) (an envelope's raw, read in place). */
export function decodeProtoRange(schema: ObjectSchema, buf: Buffer, start: number, end: number, out: Json): Json {
  decodeMessage(new Reader(buf, start, end), planOf(schema), out, 0);
  return out;
}

/** Reads fields until the reader's end into out. */
function decodeMessage(r: Reader, plan: MessagePlan, out: Json, depth: number): void {
  if (depth > MAX_DEPTH) throw protobufError('messages nested too deeply');
  while (r.pos < r.end) {
    const tag = r.uint32();
    const no = tag >>> 3;
    const wire = tag & 7;
    if (no === 0) throw protobufError(`${plan.name}: field number 0`);
    const f = plan.byNo.get(no);
    if (!f) {
      r.skipField(wire);
      continue;
    }
    if (f.inline) {
      expectWire(wire, WIRE_BYTES, plan, String(no));
      const saved = enter(r);
      decodeMessage(r, f.inline, out, depth + 1);
      leave(r, saved);
      continue;
    }
    decodeField(r, f.codec!, wire, out, f.key, plan, depth);
  }
}

/**
 * Bounds the reader to the next length-delimited value; returns the end to restore with leave().
 * (A pair of calls rather than a callback: no closure per message on the hot path.)
 */
function enter(r: Reader): number {
  const n = r.length();
  const saved = r.end;
  r.end = r.pos + n;
  return saved;
}

function leave(r: Reader, saved: number): void {
  r.pos = r.end;
  r.end = saved;
}

function decodeField(r: Reader, c: ValueCodec, wire: number, out: Json, key: string, plan: MessagePlan, depth: number): void {
  switch (c.k) {
    case 'array': {
      const list = (Array.isArray(out[key]) ? out[key] : (out[key] = [])) as unknown[];
      if (wire === WIRE_BYTES && packable(c.item)) {
        const saved = enter(r);
        while (r.pos < r.end) list.push(decodeValue(r, c.item, packedWire(c.item), plan, key, depth));
        leave(r, saved);
        return;
      }
      const v = decodeValue(r, c.item, wire, plan, key, depth);
      list.push(v ?? zeroOf(c.item));
      return;
    }
    case 'map': {
      expectWire(wire, WIRE_BYTES, plan, key);
      const map = isObject(out[key]) ? out[key] : (out[key] = {});
      const saved = enter(r);
      let k = '';
      let v: unknown;
      while (r.pos < r.end) {
        const tag = r.uint32();
        if (tag >>> 3 === 1 && (tag & 7) === WIRE_BYTES) k = r.string();
        else if (tag >>> 3 === 2) v = decodeValue(r, c.value, tag & 7, plan, key, depth);
        else r.skipField(tag & 7);
      }
      leave(r, saved);
      map[k] = v ?? zeroOf(c.value);
      return;
    }
    case 'message': {
      expectWire(wire, WIRE_BYTES, plan, key);
      // A repeated occurrence merges into the first, as protobuf merges messages.
      const into = isObject(out[key]) ? out[key] : (out[key] = {});
      const saved = enter(r);
      decodeMessage(r, c.plan, into, depth + 1);
      leave(r, saved);
      return;
    }
    default: {
      const v = decodeValue(r, c, wire, plan, key, depth);
      const keep = c.k !== 'raw' && c.keepZero;
      if (v !== undefined && (keep || (v !== '' && v !== 0 && v !== false))) out[key] = v;
      // A later zero overrides an earlier value (last one wins); deleting only then keeps objects fast.
      else if (out[key] !== undefined) delete out[key];
    }
  }
}

function decodeValue(r: Reader, c: ValueCodec, wire: number, plan: MessagePlan, key: string, depth: number): unknown {
  switch (c.k) {
    case 'message': {
      expectWire(wire, WIRE_BYTES, plan, key);
      const o: Json = {};
      const saved = enter(r);
      decodeMessage(r, c.plan, o, depth + 1);
      leave(r, saved);
      return o;
    }
    case 'array': {
      // A wrapped list (ExtraValue): its items in field 1 of a message of its own.
      expectWire(wire, WIRE_BYTES, plan, key);
      const holder: Json = {};
      const saved = enter(r);
      while (r.pos < r.end) {
        const tag = r.uint32();
        if (tag >>> 3 === 1) decodeField(r, { k: 'array', item: c.item, wrapped: false }, tag & 7, holder, 'items', plan, depth);
        else r.skipField(tag & 7);
      }
      leave(r, saved);
      return holder.items ?? [];
    }
    case 'map':
      throw protobufError(`${plan.name}.${key}: a map inside a list`);
    case 'raw':
      expectWire(wire, WIRE_BYTES, plan, key);
      return readBounded(r, plan, key, 'raw');
    default:
      return decodeScalar(r, c.k, wire, plan, key);
  }
}

function decodeScalar(r: Reader, k: ScalarKind, wire: number, plan: MessagePlan, key: string): unknown {
  switch (k) {
    case 'string':
      expectWire(wire, WIRE_BYTES, plan, key);
      return r.string();
    case 'bytes':
      expectWire(wire, WIRE_BYTES, plan, key);
      return r.bytes().toString('base64');
    case 'int32':
      expectWire(wire, WIRE_VARINT, plan, key);
      return r.int32();
    case 'int64':
      expectWire(wire, WIRE_VARINT, plan, key);
      return r.int64();
    case 'bool':
      expectWire(wire, WIRE_VARINT, plan, key);
      return r.bool();
    case 'double':
      expectWire(wire, WIRE_FIXED64, plan, key);
      return r.double();
    default:
      expectWire(wire, WIRE_BYTES, plan, key);
      return readBounded(r, plan, key, k);
  }
}

/** A small message that is one value in JSON (see readWrapped and readRaw), read within its length. */
function readBounded(r: Reader, plan: MessagePlan, key: string, k: ScalarKind | 'raw'): unknown {
  const saved = enter(r);
  const v = k === 'raw' ? readRaw(r, plan, key) : readWrapped(r, k);
  leave(r, saved);
  return v;
}

/** IntOrString, Quantity, Time and MicroTime: small messages that are scalars in JSON. */
function readWrapped(r: Reader, k: ScalarKind): unknown {
  if (r.pos === r.end) return k === 'intOrString' ? 0 : undefined;
  let a = 0;
  let b = 0;
  let s = '';
  while (r.pos < r.end) {
    const tag = r.uint32();
    const no = tag >>> 3;
    const wire = tag & 7;
    if (k === 'quantity' ? no === 1 && wire === WIRE_BYTES : k === 'intOrString' ? no === 3 && wire === WIRE_BYTES : false) s = r.string();
    else if (no === 1 && wire === WIRE_VARINT) a = r.int64();
    else if (no === 2 && wire === WIRE_VARINT) b = r.int32();
    else r.skipField(wire);
  }
  switch (k) {
    case 'quantity':
      return s === '' ? undefined : s;
    case 'intOrString':
      return a === 1 ? s : b;
    case 'duration':
      return formatGoDuration(a);
    case 'time':
      // Upstream's Time reads whole seconds only.
      return formatTime(a, 0, false);
    default:
      return formatTime(a, b, true);
  }
}

/** FieldsV1 / RawExtension: JSON text in bytes field 1. */
function readRaw(r: Reader, plan: MessagePlan, key: string): unknown {
  let raw: Buffer | undefined;
  while (r.pos < r.end) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === WIRE_BYTES) raw = r.bytes();
    else r.skipField(tag & 7);
  }
  if (!raw || raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw protobufError(`${plan.name}.${key} does not hold JSON`);
  }
}

function packable(c: ValueCodec): boolean {
  return c.k === 'int32' || c.k === 'int64' || c.k === 'bool' || c.k === 'double';
}

function packedWire(c: ValueCodec): number {
  return c.k === 'double' ? WIRE_FIXED64 : WIRE_VARINT;
}

/** The value Go gives a map entry or list element whose value is absent on the wire. */
function zeroOf(c: ValueCodec): unknown {
  switch (c.k) {
    case 'string':
    case 'bytes':
      return '';
    case 'int32':
    case 'int64':
    case 'double':
    case 'intOrString':
      return 0;
    case 'bool':
      return false;
    case 'quantity':
      return '0';
    case 'array':
      return [];
    case 'message':
      return {};
    default:
      return null;
  }
}

function expectWire(wire: number, want: number, plan: MessagePlan, key: string): void {
  if (wire !== want) throw protobufError(`${plan.name} field ${key} has wire type ${wire}, want ${want}`);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
