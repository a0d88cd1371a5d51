/**
 * SPDY/3 header blocks (draft 3.1, 2.6.10): a count of name/value pairs, each name and value
 * preceded by its 32-bit length, names lower case, several values of one name joined by NUL; the
 * whole block compressed with zlib under the preset dictionary (./spdy-dictionary.ts), one zlib
 * stream per direction for the life of the connection, each block ending on a sync flush.
 *
 * Node's zlib streams are asynchronous: each block is written, then flushed (Z_SYNC_FLUSH), and
 * its output is what the stream emitted before the flush completed. Callers run one block at a
 * time per context, in frame order (the connection chains them).
 */
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import { SPDY3_DICTIONARY } from './spdy-dictionary';
import { SpdyProtocolError } from './spdy-frame';

/** Header names to values; several values of one name are an array. */
export type SpdyHeaders = Record<string, string | string[]>;

/** Serialises headers into an uncompressed block (names lower-cased). */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const entries = Object.entries(headers);
  const count = Buffer.allocUnsafe(4);
  count.writeUInt32BE(entries.length, 0);
  parts.push(count);
  for (const [name, value] of entries) {
    for (const s of [name.toLowerCase(), Array.isArray(value) ? value.join('\0') : value]) {
      const b = Buffer.from(s, 'utf8');
      const len = Buffer.allocUnsafe(4);
      len.writeUInt32BE(b.length, 0);
      parts.push(len, b);
    }
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed block; throws SpdyProtocolError when it is malformed. */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  let at = 0;
  const u32 = (): number => {
    if (at + 4 > block.length) throw new SpdyProtocolError('truncated header block');
    const v = block.readUInt32BE(at);
    at += 4;
    return v;
  };
  const str = (): string => {
    const n = u32();
    if (at + n > block.length) throw new SpdyProtocolError('truncated header block');
    const s = block.toString('utf8', at, at + n);
    at += n;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = str().toLowerCase();
    const values = str().split('\0');
    if (name === '') throw new SpdyProtocolError('empty header name');
    if (name in out) throw new SpdyProtocolError(`header ${name} given twice`);
    out[name] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/** The first value of a header, or undefined. */
export function headerValue(h: SpdyHeaders, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** A zlib stream used block by block: write, sync flush, collect what it emitted. */
class BlockZlib {
  private out: Buffer[] = [];
  private outLength = 0;
  private failure: Error | undefined;
  private pending: ((e: Error) => void) | undefined;

  constructor(
    private readonly z: Deflate | Inflate,
    private readonly maxOut: number,
  ) {
    // Flowing: output is emitted as zlib produces it, before the flush's callback runs.
    z.on('data', (c: Buffer) => {
      this.outLength += c.length;
      if (this.outLength <= this.maxOut) this.out.push(c);
    });
    z.on('error', (e) => {
      this.failure = e;
      // After an error zlib completes nothing more: the block waiting for its flush fails now.
      this.pending?.(e);
      this.pending = undefined;
    });
  }

  run(block: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        reject(this.failure);
        return;
      }
      this.pending = reject;
      this.z.write(block);
      this.z.flush(constants.Z_SYNC_FLUSH, () => {
        this.pending = undefined;
        const length = this.outLength;
        const out = Buffer.concat(this.out);
        this.out = [];
        this.outLength = 0;
        if (this.failure) reject(this.failure);
        else if (length > this.maxOut) reject(new Error(`block of ${length} bytes is over ${this.maxOut}`));
        else resolve(out);
      });
    });
  }

  close(): void {
    this.z.close();
  }
}

/** One direction's compression context: compresses every block this side sends, one at a time, in order. */
export class HeaderCompressor {
  private readonly z = new BlockZlib(createDeflate({ dictionary: SPDY3_DICTIONARY }), Number.MAX_SAFE_INTEGER);

  compress(headers: SpdyHeaders): Promise<Buffer> {
    return this.z.run(encodeHeaderBlock(headers));
  }

  close(): void {
    this.z.close();
  }
}

/** The other direction's context: decompresses every block the peer sends, one at a time, in order. */
export class HeaderDecompressor {
  private readonly z: BlockZlib;

  constructor(maxBlock = 256 * 1024) {
    this.z = new BlockZlib(createInflate({ dictionary: SPDY3_DICTIONARY }), maxBlock);
  }

  async decompress(block: Buffer): Promise<SpdyHeaders> {
    let raw: Buffer;
    try {
      raw = await this.z.run(block);
    } catch (e) {
      throw new SpdyProtocolError(`header block does not decompress: ${(e as Error).message}`);
    }
    return decodeHeaderBlock(raw);
  }

  close(): void {
    this.z.close();
  }
}
