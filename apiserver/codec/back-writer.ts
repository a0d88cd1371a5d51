/**
 * A protobuf wire writer that fills one buffer from its end towards its start. A message is
 * written last field first, and each value before its length and tag: when a nested message is
 * done its length is known, so its length prefix is written in place without a sizing pass and
 * without moving what was written (a forward writer must reserve the prefix and shift the
 * message once it is longer than 127 bytes). Go's generated marshallers fill their buffer
 * backwards for the same reason (MarshalToSizedBuffer), after a size pass.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

/** Strings up to this many UTF-16 units are copied by a loop; longer ones by Buffer.write. */
const SHORT_STRING = 48;

export class BackWriter {
  buf: Buffer;
  /** The first written byte; everything from here to the end of buf is the output so far. */
  pos: number;

  constructor(initial = 4096) {
    this.buf = Buffer.allocUnsafe(initial);
    this.pos = initial;
  }

  /** Makes room for n more bytes below pos (a bigger buffer, the output moved to its end). */
  room(n: number): void {
    if (this.pos >= n) return;
    const used = this.buf.length - this.pos;
    let size = this.buf.length * 2;
    while (size - used < n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, size - used, this.pos);
    this.buf = next;
    this.pos = size - used;
  }

  /** Forgets what was written (the buffer is kept). */
  reset(): void {
    this.pos = this.buf.length;
  }

  /** The bytes written (a view of the buffer, not a copy). */
  finish(): Buffer {
    return this.buf.subarray(this.pos);
  }

  /** One byte (a one-byte tag, a bool, a short length). */
  byte(b: number): void {
    if (this.pos < 1) this.room(1);
    this.buf[--this.pos] = b;
  }

  /** An unsigned varint below 2^32 (a tag, a length, a non-negative int32). */
  varint(v: number): void {
    if (v < 0x80) {
      if (this.pos < 1) this.room(1);
      this.buf[--this.pos] = v;
      return;
    }
    const n = v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
    if (this.pos < n) this.room(n);
    const b = this.buf;
    let at = (this.pos -= n);
    while (v > 0x7f) {
      b[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[at] = v;
  }

  /**
   * How many bytes are written so far: a mark to pass to lengthSince once a value is written.
   * (Counted from the end, as the buffer may be replaced by a bigger one in between.)
   */
  mark(): number {
    return this.buf.length - this.pos;
  }

  /** The length of the value written since mark() returned `mark`. */
  lengthSince(mark: number): void {
    this.varint(this.buf.length - this.pos - mark);
  }

  /**
   * A signed integer as protobuf's int32/int64 varint: a negative value takes ten bytes (two's
   * complement over 64 bits), as Go writes it.
   */
  int64(v: number): void {
    if (v >= 0 && v <= 0xffffffff) {
      this.varint(v);
      return;
    }
    const abs = Math.abs(v);
    let lo = abs % 4294967296 >>> 0;
    let hi = Math.floor(abs / 4294967296) >>> 0;
    if (v < 0) {
      lo = ~lo >>> 0;
      hi = ~hi >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    // Size first (at most ten bytes), then the bytes low group first.
    let n = 1;
    for (let l = lo, h = hi; h > 0 || l > 0x7f; n++) {
      l = ((l >>> 7) | (h << 25)) >>> 0;
      h >>>= 7;
    }
    if (this.pos < n) this.room(n);
    const b = this.buf;
    let at = (this.pos -= n);
    while (hi > 0 || lo > 0x7f) {
      b[at++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[at] = lo;
  }

  double(v: number): void {
    if (this.pos < 8) this.room(8);
    this.pos -= 8;
    this.buf.writeDoubleLE(v, this.pos);
  }

  /** A length-delimited UTF-8 string (its bytes, then its length before them). */
  string(s: string): void {
    this.varint(this.utf8(s));
  }

  /**
   * The UTF-8 bytes of s, no length; returns how many. A short string is copied by a loop while its
   * characters are ASCII (one byte per UTF-16 unit, no call into the runtime); anything else, and
   * every longer string, by Buffer's native UTF-8 writer, whose fixed cost is paid back above
   * about SHORT_STRING characters. Lone surrogates become U+FFFD (EF BF BD), as Buffer writes them
   * and as Go's UTF-8 encoder does.
   */
  utf8(s: string): number {
    const n = s.length;
    if (n <= SHORT_STRING) {
      if (this.pos < n) this.room(n);
      const b = this.buf;
      const start = this.pos - n;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[start + i] = c;
      }
      if (i === n) {
        this.pos = start;
        return n;
      }
    }
    const len = Buffer.byteLength(s, 'utf8');
    if (this.pos < len) this.room(len);
    this.pos -= len;
    this.buf.write(s, this.pos, len, 'utf8');
    return len;
  }

  /** Raw bytes, no length (the caller writes it when they are a value). */
  raw(v: Uint8Array): void {
    const n = v.length;
    if (this.pos < n) this.room(n);
    this.pos -= n;
    this.buf.set(v, this.pos);
  }

  /** A length-delimited bytes value. */
  bytes(v: Uint8Array): void {
    this.raw(v);
    this.varint(v.length);
  }
}
