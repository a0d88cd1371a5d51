import type { Schema } from '../api/schema';
import { cbor } from './cbor-lib';
import { TAG_LATER_BASE64, TAG_SELF_DESCRIBED } from './cbor-wire';

/**
 * JSON-shaped values to CBOR as upstream's encoder writes API objects (apimachinery
 * runtime/serializer/cbor, internal/modes/encode.go), walking the kind's schema:
 * - the item is enclosed in the self-described tag 55799 (the body starts 0xd9d9f7);
 * - every string, map keys included, is a byte string (upstream's StringToByteString and
 *   FieldNameToByteString: cheaply valid CBOR; its decoders read either string type);
 * - a []byte field ('byte' in the schema, base64 text in JSON) is its bytes in a byte string
 *   enclosed in tag 22, "expected later base64" (ByteSliceLaterFormatBase64), so that a decoder
 *   into a string gets the same base64 text JSON has;
 * - integers are integers; other numbers, and 'double' fields, are floats in the shortest form
 *   that keeps the value (ShortestFloat16, written by cborg); times and quantities are their JSON text;
 * - absent (undefined) members are left out as JSON.stringify leaves them out; definite lengths only.
 * Differs on purpose: map entries keep the object's order (as our JSON), where upstream sorts them
 * bytewise for storage and shuffles them in responses (nothing may depend on the order).
 * Heads and strings are written here, straight into one buffer: building cborg tokens for a
 * 10,000-pod list took about 7 times as long.
 */

type Json = Record<string, unknown>;

const MAJOR_UINT = 0;
const MAJOR_NEGINT = 1;
const MAJOR_BYTES = 2;
const MAJOR_ARRAY = 4;
const MAJOR_MAP = 5;
const MAJOR_TAG = 6;

/** One CBOR document: tag 55799 and the value. */
export function encodeCbor(schema: Schema | undefined, value: unknown): Buffer {
  const w = new CborWriter();
  w.head(MAJOR_TAG, TAG_SELF_DESCRIBED);
  w.value(value, schema);
  return w.finish();
}

/**
 * One event of a CBOR watch stream (application/cbor-seq): a self-described WatchEvent map
 * {type, object} whose object is itself a self-described document, as upstream embeds the
 * object's own encoding (RawExtension.MarshalCBOR).
 */
export function encodeCborWatchEvent(type: string, schema: Schema | undefined, object: unknown): Buffer {
  const w = new CborWriter();
  w.head(MAJOR_TAG, TAG_SELF_DESCRIBED);
  w.head(MAJOR_MAP, 2);
  w.string('type');
  w.string(type);
  w.string('object');
  w.head(MAJOR_TAG, TAG_SELF_DESCRIBED);
  w.value(object, schema);
  return w.finish();
}

class CborWriter {
  private buf = Buffer.allocUnsafe(4096);
  private pos = 0;

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  value(v: unknown, s: Schema | undefined): void {
    switch (typeof v) {
      case 'string':
        if (s?.type === 'string' && s.format === 'byte') {
          this.head(MAJOR_TAG, TAG_LATER_BASE64);
          this.bytes(Buffer.from(v, 'base64'));
        } else this.string(v);
        return;
      case 'number':
        return this.number(v, s?.type === 'number' && s.format === 'double');
      case 'boolean':
        return this.byte(v ? 0xf5 : 0xf4);
      case 'object':
        if (v === null) return this.byte(0xf6);
        if (Array.isArray(v)) return this.array(v, s?.type === 'array' ? s.items : undefined);
        return this.map(v as Json, s);
      default:
        // undefined in a list (JSON writes null); nothing else occurs in a JSON value.
        return this.byte(0xf6);
    }
  }

  private array(a: readonly unknown[], items: Schema | undefined): void {
    this.head(MAJOR_ARRAY, a.length);
    for (const x of a) this.value(x, items);
  }

  private map(o: Json, s: Schema | undefined): void {
    const keys = Object.keys(o);
    let n = 0;
    for (const k of keys) if (o[k] !== undefined) n++;
    this.head(MAJOR_MAP, n);
    for (const k of keys) {
      const v = o[k];
      if (v === undefined) continue;
      this.string(k);
      this.value(v, memberSchema(s, k));
    }
  }

  private number(n: number, double: boolean): void {
    // NaN and infinities have no JSON form either (JSON.stringify writes null; upstream refuses them).
    if (!Number.isFinite(n)) return this.byte(0xf6);
    if (!double && Number.isSafeInteger(n)) return n >= 0 ? this.head(MAJOR_UINT, n) : this.head(MAJOR_NEGINT, -1 - n);
    const lib = cbor();
    const f = lib.encode(FLOAT, { typeEncoders: { Object: () => [new lib.Token(lib.Type.float, n)] } });
    this.raw(f);
  }

  /** A string as upstream writes Go strings: a byte string of its UTF-8. */
  string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.head(MAJOR_BYTES, n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  private bytes(b: Uint8Array): void {
    this.head(MAJOR_BYTES, b.length);
    this.raw(b);
  }

  private raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** A head in its shortest form (RFC 8949 4.2.1), as every CBOR encoder of API objects writes it. */
  head(major: number, n: number): void {
    this.ensure(9);
    const m = major << 5;
    const b = this.buf;
    if (n < 24) b[this.pos++] = m | n;
    else if (n < 0x100) {
      b[this.pos++] = m | 24;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos++] = m | 25;
      this.pos = b.writeUInt16BE(n, this.pos);
    } else if (n < 0x100000000) {
      b[this.pos++] = m | 26;
      this.pos = b.writeUInt32BE(n, this.pos);
    } else {
      b[this.pos++] = m | 27;
      this.pos = b.writeBigUInt64BE(BigInt(n), this.pos);
    }
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** The root handed to cborg when it writes one float (its type encoder answers the float's token). */
const FLOAT = {};

function memberSchema(s: Schema | undefined, key: string): Schema | undefined {
  if (s?.type === 'map') return s.values;
  if (s?.type === 'object' && Object.prototype.hasOwnProperty.call(s.properties, key)) return s.properties[key];
  return undefined;
}
