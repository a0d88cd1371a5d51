/**
 * The WebSocket framing of the channel protocols (upstream's apiserver/pkg/util/wsstream and
 * client-go's websocket executor): every message carries one channel's bytes, its first byte the
 * channel number (binary protocols), or the channel as an ASCII digit followed by the data in
 * base64 (text protocols *.base64.channel.k8s.io). v5.channel.k8s.io adds the close signal: a
 * binary message [255, channel] meaning the sender writes no more on that channel (the client's
 * stdin EOF). Port-forward over v4 WebSocket prefixes the first message of every channel with the
 * port, two bytes little endian.
 */
import { CLOSE_CHANNEL, STREAM_PROTOCOL_V1, STREAM_PROTOCOL_V1_BASE64, STREAM_PROTOCOL_V2, STREAM_PROTOCOL_V3, STREAM_PROTOCOL_V4, STREAM_PROTOCOL_V4_BASE64, STREAM_PROTOCOL_V5 } from './remotecommand';

/** The exec/attach WebSocket subprotocols served, in the server's order of preference. */
export const WS_EXEC_PROTOCOLS: readonly string[] = [STREAM_PROTOCOL_V5, STREAM_PROTOCOL_V4, STREAM_PROTOCOL_V4_BASE64, STREAM_PROTOCOL_V3, STREAM_PROTOCOL_V2, STREAM_PROTOCOL_V1, STREAM_PROTOCOL_V1_BASE64];

/** What one subprotocol implies for the framing and the error stream. */
export interface WsProtocolTraits {
  base64: boolean;
  /** The close signal (channel 255) is understood. */
  closeSignal: boolean;
  /** The error channel carries a Status JSON (v4+, client-go's errorDecoderV4); else plain text. */
  statusErrors: boolean;
  /** The resize channel exists (v3+). */
  resize: boolean;
}

export function wsProtocolTraits(protocol: string): WsProtocolTraits {
  const base64 = protocol.includes('base64');
  const v = /^v(\d+)\./.exec(protocol);
  const version = v ? Number(v[1]) : 1;
  return { base64, closeSignal: version >= 5, statusErrors: version >= 4, resize: version >= 3 };
}

/** Picks the first subprotocol the client offers that the server serves (the client's order, as wsstream). */
export function negotiateWsProtocol(offered: readonly string[], served: readonly string[]): string | undefined {
  return offered.find((p) => served.includes(p));
}

/** One decoded message: data on a channel, or a close signal for a channel. */
export type WsChannelMessage = { kind: 'data'; channel: number; data: Buffer } | { kind: 'close'; channel: number };

/** Encodes data on a channel as the message to send (a Buffer for binary, a string for base64 protocols). */
export function encodeChannelMessage(channel: number, data: Buffer, base64: boolean): Buffer | string {
  if (base64) return String.fromCharCode(48 + channel) + data.toString('base64');
  const out = Buffer.allocUnsafe(data.length + 1);
  out[0] = channel;
  data.copy(out, 1);
  return out;
}

/** The v5 close signal for a channel. */
export function encodeCloseSignal(channel: number): Buffer {
  return Buffer.from([CLOSE_CHANNEL, channel]);
}

/**
 * Decodes a received message. Throws (a protocol error: the caller closes the connection) on an
 * empty message or a text message that is not a digit followed by base64.
 */
export function decodeChannelMessage(msg: Buffer | string, traits: Pick<WsProtocolTraits, 'base64' | 'closeSignal'>): WsChannelMessage {
  if (typeof msg === 'string' || traits.base64) {
    const text = typeof msg === 'string' ? msg : msg.toString('latin1');
    if (text.length === 0) throw new Error('empty message');
    const channel = text.charCodeAt(0) - 48;
    if (channel < 0 || channel > 9) throw new Error(`invalid channel ${JSON.stringify(text[0])} in a text message`);
    return { kind: 'data', channel, data: Buffer.from(text.slice(1), 'base64') };
  }
  if (msg.length === 0) throw new Error('empty message');
  const channel = msg[0];
  if (channel === CLOSE_CHANNEL && traits.closeSignal) {
    if (msg.length !== 2) throw new Error('a close signal carries exactly one channel');
    return { kind: 'close', channel: msg[1] };
  }
  return { kind: 'data', channel, data: msg.subarray(1) };
}

/** The port prefix of a port-forward channel's first message (two bytes, little endian). */
export function portPrefix(port: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16LE(port, 0);
  return b;
}
