/**
 * A protobuf wire writer into one growing buffer. Nested messages are written in place: fork()
 * reserves one byte for the length, join() writes it and, for a message of 128 bytes or more,
 * moves the content right by the extra length bytes. So a message is written once, without a
 * separate sizing pass, and short messages (most of them) never move.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

export class Writer {
  private buf: Buffer;
  pos = 0;

  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** The bytes written so far (a view, not a copy). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  tag(no: number, wire: number): void {
    this.uint32(no * 8 + wire);
  }

  /** An unsigned varint below 2^32. */
  uint32(v: number): void {
    this.ensure(5);
    const b = this.buf;
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  /**
   * A signed integer as protobuf's int32/int64 varint: negative values take ten bytes (two's
   * complement over 64 bits), as Go writes them.
   */
  int64(v: number): void {
    if (v >= 0 && v <= 0xffffffff) return this.uint32(v);
    this.ensure(10);
    let lo: number;
    let hi: number;
    const abs = Math.abs(v);
    lo = abs % 4294967296 >>> 0;
    hi = Math.floor(abs / 4294967296) >>> 0;
    if (v < 0) {
      lo = ~lo >>> 0;
      hi = ~hi >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    const b = this.buf;
    while (hi > 0 || lo > 0x7f) {
      b[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[this.pos++] = lo;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-delimited UTF-8 string. */
  string(s: string): void {
    const n = s.length;
    if (n < 128) {
      // ASCII fast path: one length byte, one byte per character.
      this.ensure(n + 1);
      const b = this.buf;
      const start = this.pos;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[start + 1 + i] = c;
      }
      if (i === n) {
        b[start] = n;
        this.pos = start + 1 + n;
        return;
      }
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.buf.write(s, this.pos, len, 'utf8');
    this.pos += len;
  }

  bytes(v: Uint8Array): void {
    this.uint32(v.length);
    this.raw(v);
  }

  /** Starts a length-delimited value; returns the mark join() needs. */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the value fork() started: writes its length before it. */
  join(mark: number): void {
    const len = this.pos - mark - 1;
    if (len < 0x80) {
      this.buf[mark] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    this.pos += extra;
    let v = len;
    let at = mark;
    while (v > 0x7f) {
      this.buf[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[at] = v;
  }
}

function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v >>>= 7;
    n++;
  }
  return n;
}
