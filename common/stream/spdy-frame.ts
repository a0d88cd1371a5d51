/**
 * SPDY/3.1 framing (SPDY draft 3.1, section 2): encoding and incremental decoding of frames.
 * A control frame is 0x80 0x03 (control bit, version 3), a 16-bit type, 8-bit flags, a 24-bit
 * length and its data; a data frame is a 31-bit stream id, flags, length and payload. Header
 * blocks travel compressed (./spdy-header-codec.ts); here they are opaque bytes.
 */

export const SPDY_VERSION = 3;

export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes (draft 3.1, 2.6.3). */
export const RstStatus = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  FRAME_TOO_LARGE: 11,
} as const;

/** SETTINGS ids used here. */
export const SETTINGS_MAX_CONCURRENT_STREAMS = 4;
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;

/** The largest frame payload (24-bit length). */
export const MAX_FRAME_LENGTH = 0xffffff;

export type SpdyFrame =
  | { type: 'data'; streamId: number; flags: number; data: Buffer }
  | { type: 'syn_stream'; streamId: number; associatedId: number; priority: number; flags: number; headerBlock: Buffer }
  | { type: 'syn_reply'; streamId: number; flags: number; headerBlock: Buffer }
  | { type: 'headers'; streamId: number; flags: number; headerBlock: Buffer }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; flags: number; entries: { flags: number; id: number; value: number }[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  | { type: 'unknown'; frameType: number; flags: number; data: Buffer };

function control(type: number, flags: number, body: Buffer): Buffer {
  if (body.length > MAX_FRAME_LENGTH) throw new Error(`frame of ${body.length} bytes is over the 24-bit length`);
  const h = Buffer.allocUnsafe(8);
  h.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(((flags & 0xff) << 24) | body.length, 4);
  return Buffer.concat([h, body]);
}

function u32s(...values: number[]): Buffer {
  const b = Buffer.allocUnsafe(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

/** Encodes one frame (header blocks must already be compressed). */
export function encodeFrame(f: SpdyFrame): Buffer {
  switch (f.type) {
    case 'data': {
      if (f.data.length > MAX_FRAME_LENGTH) throw new Error(`data frame of ${f.data.length} bytes is over the 24-bit length`);
      const h = Buffer.allocUnsafe(8);
      h.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      h.writeUInt32BE(((f.flags & 0xff) << 24) | f.data.length, 4);
      return Buffer.concat([h, f.data]);
    }
    case 'syn_stream': {
      const b = Buffer.allocUnsafe(10);
      b.writeUInt32BE(f.streamId & 0x7fffffff, 0);
      b.writeUInt32BE(f.associatedId & 0x7fffffff, 4);
      b[8] = (f.priority & 0x7) << 5;
      b[9] = 0; // slot
      return control(FrameType.SYN_STREAM, f.flags, Buffer.concat([b, f.headerBlock]));
    }
    case 'syn_reply':
      return control(FrameType.SYN_REPLY, f.flags, Buffer.concat([u32s(f.streamId & 0x7fffffff), f.headerBlock]));
    case 'headers':
      return control(FrameType.HEADERS, f.flags, Buffer.concat([u32s(f.streamId & 0x7fffffff), f.headerBlock]));
    case 'rst_stream':
      return control(FrameType.RST_STREAM, 0, u32s(f.streamId & 0x7fffffff, f.status));
    case 'settings': {
      const b = Buffer.allocUnsafe(4 + f.entries.length * 8);
      b.writeUInt32BE(f.entries.length, 0);
      f.entries.forEach((e, i) => {
        b.writeUInt32BE((((e.flags & 0xff) << 24) | (e.id & 0xffffff)) >>> 0, 4 + i * 8);
        b.writeUInt32BE(e.value >>> 0, 8 + i * 8);
      });
      return control(FrameType.SETTINGS, f.flags, b);
    }
    case 'ping':
      return control(FrameType.PING, 0, u32s(f.id));
    case 'goaway':
      return control(FrameType.GOAWAY, 0, u32s(f.lastGoodStreamId & 0x7fffffff, f.status));
    case 'window_update':
      return control(FrameType.WINDOW_UPDATE, 0, u32s(f.streamId & 0x7fffffff, f.delta & 0x7fffffff));
    case 'unknown':
      return control(f.frameType, f.flags, f.data);
  }
}

/** A malformed frame: the connection cannot continue (GOAWAY with PROTOCOL_ERROR). */
export class SpdyProtocolError extends Error {}

function need(body: Buffer, n: number, what: string): void {
  if (body.length < n) throw new SpdyProtocolError(`${what} frame of ${body.length} bytes is too short (at least ${n})`);
}

function decodeControl(type: number, flags: number, body: Buffer): SpdyFrame {
  switch (type) {
    case FrameType.SYN_STREAM:
      need(body, 10, 'SYN_STREAM');
      return { type: 'syn_stream', streamId: body.readUInt32BE(0) & 0x7fffffff, associatedId: body.readUInt32BE(4) & 0x7fffffff, priority: body[8] >> 5, flags, headerBlock: body.subarray(10) };
    case FrameType.SYN_REPLY:
      need(body, 4, 'SYN_REPLY');
      return { type: 'syn_reply', streamId: body.readUInt32BE(0) & 0x7fffffff, flags, headerBlock: body.subarray(4) };
    case FrameType.HEADERS:
      need(body, 4, 'HEADERS');
      return { type: 'headers', streamId: body.readUInt32BE(0) & 0x7fffffff, flags, headerBlock: body.subarray(4) };
    case FrameType.RST_STREAM:
      need(body, 8, 'RST_STREAM');
      return { type: 'rst_stream', streamId: body.readUInt32BE(0) & 0x7fffffff, status: body.readUInt32BE(4) };
    case FrameType.SETTINGS: {
      need(body, 4, 'SETTINGS');
      const n = body.readUInt32BE(0);
      need(body, 4 + n * 8, 'SETTINGS');
      const entries = [];
      for (let i = 0; i < n; i++) {
        const head = body.readUInt32BE(4 + i * 8);
        entries.push({ flags: head >>> 24, id: head & 0xffffff, value: body.readUInt32BE(8 + i * 8) });
      }
      return { type: 'settings', flags, entries };
    }
    case FrameType.PING:
      need(body, 4, 'PING');
      return { type: 'ping', id: body.readUInt32BE(0) };
    case FrameType.GOAWAY:
      need(body, 8, 'GOAWAY');
      return { type: 'goaway', lastGoodStreamId: body.readUInt32BE(0) & 0x7fffffff, status: body.readUInt32BE(4) };
    case FrameType.WINDOW_UPDATE:
      need(body, 8, 'WINDOW_UPDATE');
      return { type: 'window_update', streamId: body.readUInt32BE(0) & 0x7fffffff, delta: body.readUInt32BE(4) & 0x7fffffff };
    default:
      return { type: 'unknown', frameType: type, flags, data: body };
  }
}

/**
 * Incremental decoder: push bytes as they arrive, get the complete frames. Frames longer than
 * maxFrame (default 16 MiB - 1, the format's limit) are a protocol error, so a peer cannot make it
 * buffer without bound beyond one frame.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private length = 0;

  constructor(private readonly maxFrame = MAX_FRAME_LENGTH) {}

  push(chunk: Buffer): SpdyFrame[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const frames: SpdyFrame[] = [];
    for (;;) {
      if (this.length < 8) break;
      const head = this.peek(8);
      const len = head.readUInt32BE(4) & 0xffffff;
      if (len > this.maxFrame) throw new SpdyProtocolError(`frame of ${len} bytes is over the limit of ${this.maxFrame}`);
      if (this.length < 8 + len) break;
      const all = this.take(8 + len);
      const body = all.subarray(8);
      const flags = all[4];
      if (all[0] & 0x80) {
        const version = all.readUInt16BE(0) & 0x7fff;
        if (version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${version}`);
        frames.push(decodeControl(all.readUInt16BE(2), flags, body));
      } else {
        frames.push({ type: 'data', streamId: all.readUInt32BE(0) & 0x7fffffff, flags, data: body });
      }
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0].length >= n) return this.chunks[0].subarray(0, n);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.subarray(0, n);
  }

  private take(n: number): Buffer {
    if (this.chunks[0].length < n) this.chunks = [Buffer.concat(this.chunks)];
    const first = this.chunks[0];
    const out = first.subarray(0, n);
    if (first.length === n) this.chunks.shift();
    else this.chunks[0] = first.subarray(n);
    this.length -= n;
    return out;
  }
}
