import { ApiError } from '../api/errors';
import { WIRE_BYTES, WIRE_FIXED32, WIRE_FIXED64, WIRE_VARINT } from './back-writer';

/**
 * A bounds-checked protobuf wire reader. Every length is checked against the bytes that remain
 * and every malformed input is an ApiError BadRequest naming what is wrong, so a hostile body costs
 * at most one pass over its bytes and never throws anything else.
 */

const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
/** Deprecated proto2 groups are skipped up to this depth (upstream never writes them). */
const MAX_GROUP_DEPTH = 32;

export function protobufError(why: string): ApiError {
  return new ApiError('BadRequest', `the body could not be decoded as protobuf: ${why}`);
}

export class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    public end = buf.length,
  ) {
    this.pos = start;
  }

  /** A varint below 2^32 (tags, lengths, int32 values' low half). */
  uint32(): number {
    const b = this.buf;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= this.end) throw protobufError('truncated varint');
      const c = b[this.pos++];
      v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return v >>> 0;
    }
    // The high bytes of a 64-bit varint (a negative int32 is written over ten bytes).
    for (let n = 0; n < 5; n++) {
      if (this.pos >= this.end) throw protobufError('truncated varint');
      if (b[this.pos++] < 0x80) return v >>> 0;
    }
    throw protobufError('varint longer than ten bytes');
  }

  /** An int32 field: the low 32 bits of the varint, signed. */
  int32(): number {
    return this.uint32() | 0;
  }

  /** An int64 field as a number (exact up to 2^53, as JSON numbers are). */
  int64(): number {
    const b = this.buf;
    let lo = 0;
    let hi = 0;
    let i = 0;
    for (; i < 10; i++) {
      if (this.pos >= this.end) throw protobufError('truncated varint');
      const c = b[this.pos++];
      const bits = c & 0x7f;
      if (i < 4) lo = (lo | (bits << (7 * i))) >>> 0;
      else if (i === 4) {
        lo = (lo | (bits << 28)) >>> 0;
        hi = bits >>> 4;
      } else hi = (hi | (bits << (7 * i - 32))) >>> 0;
      if (c < 0x80) break;
    }
    if (i === 10) throw protobufError('varint longer than ten bytes');
    if (hi >>> 31) {
      lo = (~lo + 1) >>> 0;
      hi = ~hi >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
      return -(lo + hi * 4294967296);
    }
    return lo + hi * 4294967296;
  }

  bool(): boolean {
    return this.int64() !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw protobufError('truncated fixed64');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** The length of a length-delimited value, checked against what remains. */
  length(): number {
    const n = this.uint32();
    if (n > this.end - this.pos) throw protobufError(`a length of ${n} bytes runs past the end of its message`);
    return n;
  }

  string(): string {
    const n = this.length();
    const start = this.pos;
    this.pos += n;
    if (n < 16) {
      let s = '';
      for (let i = start; i < start + n; i++) {
        const c = this.buf[i];
        if (c >= 0x80) return this.buf.toString('utf8', start, start + n);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return this.buf.toString('utf8', start, start + n);
  }

  bytes(): Buffer {
    const n = this.length();
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** Skips a field of an unknown number (upstream ignores unknown protobuf fields). */
  skipField(wire: number, depth = 0): void {
    switch (wire) {
      case WIRE_VARINT:
        this.int64();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_BYTES:
        this.advance(this.length());
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      case WIRE_START_GROUP: {
        if (depth >= MAX_GROUP_DEPTH) throw protobufError('groups nested too deeply');
        for (;;) {
          const tag = this.uint32();
          if ((tag & 7) === WIRE_END_GROUP) return;
          this.skipField(tag & 7, depth + 1);
        }
      }
      default:
        throw protobufError(`unexpected wire type ${wire}`);
    }
  }

  private advance(n: number): void {
    if (n > this.end - this.pos) throw protobufError('truncated field');
    this.pos += n;
  }
}
