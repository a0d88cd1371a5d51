import type { Schema } from '../api/schema';
import { cbor, type CborLib } from './cbor-lib';
import {
  cborError,
  TAG_BIGNUM_NEG,
  TAG_BIGNUM_POS,
  TAG_LATER_BASE16,
  TAG_LATER_BASE64,
  TAG_LATER_BASE64URL,
  TAG_TIME_EPOCH,
  TAG_TIME_TEXT,
} from './cbor-wire';
import { parseTime } from './time';

/**
 * A CBOR request body to the JSON value the same object has in JSON, as upstream's CBOR decoder
 * (apimachinery runtime/serializer/cbor, internal/modes/decode.go) reads it into Go types:
 * - one data item, nothing after it; indefinite-length arrays and maps are read (cborg refuses
 *   indefinite-length strings, which upstream reads; no Kubernetes encoder writes them);
 * - map keys are text or byte strings (client-go writes byte strings); any other key, and a key
 *   twice in one map, is refused (upstream's DupMapKeyEnforcedAPF: a 400, not a field-validation
 *   warning as for JSON);
 * - text strings must be valid UTF-8; byte strings stand for strings (upstream encodes every Go
 *   string as one) and must be valid UTF-8 too (upstream keeps their bytes in a Go string; a JS
 *   string cannot);
 * - a byte string inside an "expected later encoding" tag (21 base64url, 22 base64, 23 base16) is
 *   bytes: a []byte field ('byte' in the schema) gets them as its JSON form, standard base64;
 *   anywhere else the tag's text encoding is applied (ByteStringToStringAllowedWithExpectedLaterEncoding).
 *   Untagged, a []byte field's byte or text string is its base64 text (ByteStringExpectedBase64);
 * - tag 0 must hold an RFC 3339 text string, tag 1 a number of seconds (read as RFC 3339 text);
 *   bignums (tags 2, 3) are refused; any other tag, 55799 included, stands for its content;
 * - integers beyond int64, NaN, infinities, undefined and simple values other than false, true and
 *   null are refused;
 * - nesting is bounded (limits.maxDepth, the same as JSON bodies'); the body size is the caller's.
 * Unknown fields are not an error here: the caller's field validation sees them, as for JSON.
 * Built iteratively from cborg's tokens in one pass, so hostile nesting costs its length only.
 */

type Json = Record<string, unknown>;
type Tokenizer = InstanceType<CborLib['Tokenizer']>;
type Token = ReturnType<Tokenizer['next']>;

export interface CborLimits {
  /** Deepest nesting of arrays and maps (a scalar is 0, [] and {} are 1). */
  maxDepth: number;
}

/** Decodes one CBOR data item; schema (optional) tells which strings are []byte fields. */
export function decodeCbor(bytes: Uint8Array, schema: Schema | undefined, limits: CborLimits): unknown {
  if (bytes.length === 0) throw cborError('the body is empty');
  const b = new CborBuilder(bytes, schema, limits.maxDepth);
  const v = b.next();
  const rest = b.remaining();
  if (rest > 0) throw cborError(`${rest} byte${rest === 1 ? '' : 's'} follow the data item (a body is one data item)`);
  return v;
}

/** Decodes a CBOR Sequence (RFC 8742; a watch stream), every item with the same schema. */
export function decodeCborSequence(bytes: Uint8Array, schema: Schema | undefined, limits: CborLimits): unknown[] {
  const b = new CborBuilder(bytes, schema, limits.maxDepth);
  const items: unknown[] = [];
  while (b.remaining() > 0) items.push(b.next());
  return items;
}

interface Frame {
  value: Json | unknown[];
  map: boolean;
  /** Items (a map's entries) still to read; Infinity for an indefinite length, ended by a break. */
  left: number;
  schema: Schema | undefined;
  /** A map's key whose value is read next. */
  key: string | undefined;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

class CborBuilder {
  private readonly tk: Tokenizer;
  private readonly stack: Frame[] = [];
  /** Tags read before the data item they enclose, outermost first. */
  private tags: number[] = [];
  private root: unknown;
  private done = false;

  constructor(
    private readonly data: Uint8Array,
    private readonly schema: Schema | undefined,
    private readonly maxDepth: number,
  ) {
    this.tk = new (cbor().Tokenizer)(data, { allowBigInt: true, allowUndefined: true, allowIndefinite: true, allowNaN: true, allowInfinity: true });
  }

  /** Reads the next data item. */
  next(): unknown {
    this.done = false;
    while (!this.done) this.step();
    return this.root;
  }

  /** Bytes not read yet. */
  remaining(): number {
    return this.data.length - this.tk.pos();
  }

  private step(): void {
    if (this.tk.done()) throw cborError('unexpected end of data', this.path());
    const start = this.tk.pos();
    let t: Token;
    try {
      t = this.tk.next();
    } catch (err) {
      throw cborError((err as Error).message.replace(/^CBOR decode error: /, ''), this.path());
    }
    const top = this.stack.at(-1);
    const name = t.type.name;
    if (name === 'break') return this.endIndefinite(top);
    if (name === 'tag') {
      this.tags.push(Number(t.value));
      return;
    }
    if (top?.map && top.key === undefined) return this.readKey(top, t, start);
    const schema = top ? childSchema(top) : this.schema;
    if (name === 'array' || name === 'map') return this.open(t, name === 'map', schema);
    this.deliver(this.scalar(t, start, schema));
  }

  private open(t: Token, map: boolean, schema: Schema | undefined): void {
    const tag = meaningfulTag(this.takeTags());
    if (tag === TAG_TIME_TEXT || tag === TAG_TIME_EPOCH) throw cborError(`tag ${tag} encloses ${map ? 'a map' : 'an array'}, not a time`, this.path());
    if (this.stack.length + 1 > this.maxDepth) throw cborError(`exceeded max depth of ${this.maxDepth}`, this.path());
    const left = Number(t.value);
    if (left === 0) return this.deliver(map ? {} : []);
    this.stack.push({ value: map ? {} : [], map, left, schema, key: undefined });
  }

  private endIndefinite(top: Frame | undefined): void {
    if (!top || top.left !== Infinity || this.tags.length > 0 || (top.map && top.key !== undefined)) throw cborError('unexpected break', this.path());
    this.stack.pop();
    this.deliver(top.value);
  }

  private readKey(top: Frame, t: Token, start: number): void {
    if (this.tags.length > 0) throw cborError(`a map key is tagged (tag ${this.tags[0]})`, this.path());
    let key: string;
    if (t.type.name === 'string') key = this.text(t, start);
    else if (t.type.name === 'bytes') key = bytesToText(t.value as Uint8Array, () => this.path());
    else throw cborError(`a map key is ${describe(t)}: keys must be text or byte strings`, this.path());
    if (Object.prototype.hasOwnProperty.call(top.value, key)) throw cborError(`duplicate map key ${JSON.stringify(key)}`, this.path());
    top.key = key;
  }

  /** Adds a finished value to its parent; a parent that is then complete is finished in turn. */
  private deliver(v: unknown): void {
    for (;;) {
      const top = this.stack.at(-1);
      if (!top) {
        this.root = v;
        this.done = true;
        return;
      }
      if (top.map) {
        setOwn(top.value as Json, top.key!, v);
        top.key = undefined;
      } else (top.value as unknown[]).push(v);
      if (top.left === Infinity || --top.left > 0) return;
      this.stack.pop();
      v = top.value;
    }
  }

  private scalar(t: Token, start: number, schema: Schema | undefined): unknown {
    const tag = meaningfulTag(this.takeTags());
    const where = () => this.path();
    switch (t.type.name) {
      case 'uint':
      case 'negint':
        return tag === TAG_TIME_EPOCH ? epochTime(Number(t.value), where) : tagless(tag, integer(t.value as number | bigint, where), where);
      case 'float': {
        const n = t.value as number;
        if (!Number.isFinite(n)) throw cborError(`${String(n)} is not allowed (JSON has no such number)`, where());
        return tag === TAG_TIME_EPOCH ? epochTime(n, where) : tagless(tag, n, where);
      }
      case 'true':
      case 'false':
      case 'null':
        return tagless(tag, t.value, where);
      case 'string': {
        const s = this.text(t, start);
        if (tag === TAG_TIME_TEXT && !parseTime(s, true)) throw cborError(`tag 0 holds ${JSON.stringify(s)}, not an RFC 3339 time`, where());
        if (tag === TAG_TIME_EPOCH) throw cborError('tag 1 holds a text string, not a number', where());
        return s;
      }
      case 'bytes':
        return this.bytes(t.value as Uint8Array, tag, schema, where);
      default:
        throw cborError(`${describe(t)} is not allowed (only false, true and null are)`, where());
    }
  }

  private bytes(b: Uint8Array, tag: number | undefined, schema: Schema | undefined, where: () => string): string {
    const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    switch (tag) {
      case TAG_LATER_BASE64URL:
        return schema?.type === 'string' && schema.format === 'byte' ? buf.toString('base64') : buf.toString('base64url');
      case TAG_LATER_BASE64:
        return buf.toString('base64');
      case TAG_LATER_BASE16:
        return schema?.type === 'string' && schema.format === 'byte' ? buf.toString('base64') : buf.toString('hex');
      case TAG_TIME_TEXT:
      case TAG_TIME_EPOCH:
        throw cborError(`tag ${tag} holds a byte string`, where());
      default:
        return bytesToText(b, where);
    }
  }

  /** A text string's value; cborg decodes leniently, so one with U+FFFD is checked again strictly. */
  private text(t: Token, start: number): string {
    const s = t.value as string;
    if (!s.includes('\uFFFD')) return s;
    const ai = this.data[start] & 31;
    const head = ai < 24 ? 1 : ai === 24 ? 2 : ai === 25 ? 3 : ai === 26 ? 5 : 9;
    try {
      return utf8.decode(this.data.subarray(start + head, this.tk.pos()));
    } catch {
      throw cborError('a text string is not valid UTF-8', this.path());
    }
  }

  private takeTags(): number[] {
    const tags = this.tags;
    if (tags.length > 0) this.tags = [];
    return tags;
  }

  /** Where the item being read sits, in the strict decoder's form (`.spec.containers[0].image`), its last 32 steps. */
  private path(): string {
    let p = this.stack.length > 32 ? '…' : '';
    for (const f of this.stack.slice(-32)) {
      if (f.map) p += f.key === undefined ? '' : `.${f.key}`;
      else p += `[${(f.value as unknown[]).length}]`;
    }
    return p;
  }
}

/** The schema of the item read next inside a container (undefined: any JSON). */
function childSchema(f: Frame): Schema | undefined {
  const s = f.schema;
  if (!s) return undefined;
  if (!f.map) return s.type === 'array' ? s.items : undefined;
  if (s.type === 'map') return s.values;
  if (s.type === 'object' && Object.prototype.hasOwnProperty.call(s.properties, f.key!)) return s.properties[f.key!];
  return undefined;
}

/** The innermost tag with a meaning here; bignums anywhere are refused; 55799 and unknown tags stand for their content. */
function meaningfulTag(tags: readonly number[]): number | undefined {
  let found: number | undefined;
  for (const tag of tags) {
    if (tag === TAG_BIGNUM_POS || tag === TAG_BIGNUM_NEG) throw cborError(`bignums (tag ${tag}) are not allowed`);
    if (tag === TAG_TIME_TEXT || tag === TAG_TIME_EPOCH || tag === TAG_LATER_BASE64URL || tag === TAG_LATER_BASE64 || tag === TAG_LATER_BASE16) found = tag;
  }
  return found;
}

/** A value that tags 0 and 1 cannot enclose (21-23 only concern byte strings). */
function tagless(tag: number | undefined, v: unknown, where: () => string): unknown {
  if (tag === TAG_TIME_TEXT) throw cborError('tag 0 holds something other than a text string', where());
  if (tag === TAG_TIME_EPOCH) throw cborError('tag 1 holds something other than a number', where());
  return v;
}

/** An integer as JSON would read it: int64 only (upstream's IntDecConvertSignedOrFail), beyond 2^53 as the nearest double. */
function integer(v: number | bigint, where: () => string): number {
  if (typeof v === 'number') return v;
  if (v > INT64_MAX || v < INT64_MIN) throw cborError(`integer ${v} overflows int64`, where());
  return Number(v);
}

/** Tag 1 (seconds since the epoch) as RFC 3339 text with the fraction it has (Go's RFC3339Nano). */
function epochTime(seconds: number, where: () => string): string {
  const whole = Math.floor(seconds);
  // Go's time range for API objects: years 0001 through 9999.
  if (!Number.isFinite(seconds) || whole < -62135596800 || whole > 253402300799) throw cborError(`tag 1 time ${seconds} is out of range`, where());
  const nanos = Math.min(999999999, Math.round((seconds - whole) * 1e9));
  const date = new Date(whole * 1000).toISOString().slice(0, 19);
  return nanos === 0 ? `${date}Z` : `${date}.${String(nanos).padStart(9, '0').replace(/0+$/, '')}Z`;
}

/** A byte string used as text: its UTF-8 (strictly; a JS string cannot hold other bytes). */
function bytesToText(b: Uint8Array, where?: () => string): string {
  const s = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
  if (!s.includes('\uFFFD')) return s;
  try {
    return utf8.decode(b);
  } catch {
    throw cborError('a byte string used as text is not valid UTF-8', where?.());
  }
}

function describe(t: Token): string {
  switch (t.type.name) {
    case 'uint':
    case 'negint':
      return 'an integer';
    case 'float':
      return 'a float';
    case 'array':
      return 'an array';
    case 'map':
      return 'a map';
    case 'undefined':
      return 'undefined';
    default:
      return t.type.name;
  }
}

/** Sets o[k] as an own data property, even for "__proto__" (patch/json-value.ts setOwn; codec/ cannot import patch/). */
function setOwn(o: Json, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}
