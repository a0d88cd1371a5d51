/**
 * The remotecommand stream contract shared by exec, attach and port-forward (upstream's
 * k8s.io/apimachinery/pkg/util/remotecommand and client-go's tools/remotecommand): protocol names,
 * the stream/channel numbering, the exit Status written on the error stream, and the terminal size
 * written on the resize stream. Pure data; both daemons use it.
 */

/** Exec/attach protocol versions, newest first (X-Stream-Protocol-Version over SPDY, the WebSocket subprotocol). */
export const STREAM_PROTOCOL_V5 = 'v5.channel.k8s.io';
export const STREAM_PROTOCOL_V4 = 'v4.channel.k8s.io';
export const STREAM_PROTOCOL_V3 = 'v3.channel.k8s.io';
export const STREAM_PROTOCOL_V2 = 'v2.channel.k8s.io';
/** The original protocol: SPDY without a resize stream and with the error stream as plain text. */
export const STREAM_PROTOCOL_V1 = 'channel.k8s.io';
/** WebSocket variants whose messages are text: the channel as an ASCII digit, the data base64. */
export const STREAM_PROTOCOL_V4_BASE64 = 'v4.base64.channel.k8s.io';
export const STREAM_PROTOCOL_V1_BASE64 = 'base64.channel.k8s.io';
/** Port-forward over SPDY, and over WebSocket its tunnelled form (SPDY framed inside binary messages). */
export const PORT_FORWARD_PROTOCOL_V1 = 'portforward.k8s.io';
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

/** Channel numbers (WebSocket) and the streamType header values (SPDY) of exec and attach. */
export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;
export const ERROR = 3;
export const RESIZE = 4;
/** v5's close signal: a message [255, channel] says the sender will write no more on that channel. */
export const CLOSE_CHANNEL = 255;

export const STREAM_TYPES = ['stdin', 'stdout', 'stderr', 'error', 'resize'] as const;
export type StreamType = (typeof STREAM_TYPES)[number];

/** The size a terminal resize carries (client-go's TerminalSize; its JSON keys are the Go field names). */
export interface TerminalSize {
  width: number;
  height: number;
}

/** How a command ended: an exit code, or an error that is not the command's (runtime failure, bad request). */
export type ExitResult = { exitCode: number } | { error: string };

/**
 * The metav1.Status written on the error stream when a command ends (protocol v2 and later), as
 * upstream's kubelet writes it: Success for exit 0; for a non-zero exit, Failure with reason
 * NonZeroExitCode and a cause {type ExitCode, message "<code>"} that clients turn back into the exit
 * code; for other errors, Failure with reason InternalError and the message.
 */
export function exitStatus(r: ExitResult, cmd: readonly string[] = []): Record<string, unknown> {
  const base = { kind: 'Status', apiVersion: 'v1', metadata: {} };
  if ('error' in r) return { ...base, status: 'Failure', message: r.error, reason: 'InternalError', code: 500 };
  if (r.exitCode === 0) return { ...base, status: 'Success' };
  return {
    ...base,
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(' ')}], exit code ${r.exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(r.exitCode) }] },
  };
}

/**
 * Reads what the error stream carried back into an ExitResult (as client-go's
 * errorDecoderV4): empty means success; a Status with a NonZeroExitCode cause gives the code.
 * v1 sends the error as plain text, which becomes an error result.
 */
export function parseExitStatus(body: Buffer | string): ExitResult {
  const text = body.toString();
  if (text.trim() === '') return { exitCode: 0 };
  let s: { status?: string; reason?: string; message?: string; details?: { causes?: { reason?: string; message?: string }[] } };
  try {
    s = JSON.parse(text) as typeof s;
  } catch {
    return { error: text };
  }
  if (s.status === 'Success') return { exitCode: 0 };
  if (s.reason === 'NonZeroExitCode') {
    const cause = s.details?.causes?.find((c) => c.reason === 'ExitCode');
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return { exitCode: code };
  }
  return { error: s.message ?? text };
}

/**
 * Reads one TerminalSize JSON document ({"Width":80,"Height":24}, Go's field names; any case
 * accepted as encoding/json does). Undefined when it is not one.
 */
export function parseTerminalSize(text: string): TerminalSize | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) o[k.toLowerCase()] = val;
  const width = o.width;
  const height = o.height;
  if (typeof width !== 'number' || typeof height !== 'number' || !Number.isInteger(width) || !Number.isInteger(height) || width < 0 || height < 0 || width > 0xffff || height > 0xffff) return undefined;
  return { width, height };
}

/** The JSON a client writes on the resize stream. */
export function encodeTerminalSize(s: TerminalSize): string {
  return JSON.stringify({ Width: s.width, Height: s.height });
}

/**
 * Splits a stream of JSON documents (the resize stream carries one per resize, back to back, as
 * Go's json.Decoder reads them) into whole objects; the remainder stays buffered.
 */
export class JsonObjectSplitter {
  private buf = '';

  /** Appends text and returns every complete top-level {...} document it finishes. */
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    let depth = 0;
    let start = -1;
    let inString = false;
    let escaped = false;
    let consumed = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') {
        if (depth === 0) start = i;
        depth++;
      } else if (c === '}' && depth > 0) {
        depth--;
        if (depth === 0) {
          out.push(this.buf.slice(start, i + 1));
          consumed = i + 1;
        }
      }
    }
    this.buf = this.buf.slice(consumed);
    // A client that sends garbage without braces must not grow the buffer without bound.
    if (this.buf.length > 4096) this.buf = '';
    return out;
  }
}
