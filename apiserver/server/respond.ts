import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';
import { ApiError } from '../api/errors';
import type { ObjectSchema, Schema } from '../api/schema';
import { encodeCbor } from '../codec/cbor-encode';
import { CBOR_MEDIA_TYPE } from '../codec/cbor-wire';
import type { CachedEncoding } from '../codec/encoded-cache';
import { encodeObjectText, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { statusSchema } from '../registry/meta-schemas';
import { StorageError } from '../storage/storage';
import { responseTaps } from './audit-taps';
import { binaryReply } from './negotiation';

export interface SendOptions {
  yaml?: boolean;
  /** Write the body as Kubernetes protobuf with this schema (the caller negotiated it). */
  protobuf?: ObjectSchema;
  /** Write the body as CBOR (the caller negotiated it); schema, when known, marks its []byte fields. */
  cbor?: { schema?: Schema };
  /** The body (or each item of a list) is a stored version a read returned unchanged: its protobuf may come from this cache. */
  protobufCache?: CachedEncoding;
  pretty?: boolean;
  /** Responses to reads are compressed when the client accepts gzip (4.5, APIResponseCompression). */
  compress?: boolean;
  warnings?: readonly string[];
  headers?: Record<string, string>;
}

/** Upstream only compresses bodies above a threshold; tiny bodies grow under gzip. */
const GZIP_MIN_BYTES = 1024;

/** Binary bodies up to this size are handed to Node as latin1 text (see endWith). */
const ONE_WRITE_BYTES = 64 * 1024;

export function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, opts: SendOptions = {}): void {
  responseTaps.get(res)?.(status, body);
  let text: string | Buffer;
  let type: string;
  /** text is a string of bytes (latin1: one character a byte), not UTF-8 text. */
  let bytesAsText = false;
  if (opts.protobuf) {
    text = encodeObjectText(opts.protobuf, body as Record<string, unknown>, opts.protobufCache, ONE_WRITE_BYTES);
    bytesAsText = typeof text === 'string';
    type = PROTOBUF_MEDIA_TYPE;
  } else if (opts.cbor) {
    text = encodeCbor(opts.cbor.schema, body);
    type = CBOR_MEDIA_TYPE;
  } else if (opts.yaml) {
    text = toYaml(body, { lineWidth: 0 });
    type = 'application/yaml';
  } else {
    text = opts.pretty ? JSON.stringify(body, null, 2) + '\n' : JSON.stringify(body) + '\n';
    type = 'application/json';
  }
  const headers: Record<string, string | string[]> = { 'Content-Type': type, 'Cache-Control': 'no-cache, private', ...opts.headers };
  if (opts.warnings?.length) {
    // Warnings set before the handler ran (a deprecated API version's) come first.
    const earlier = typeof res.getHeader === 'function' ? res.getHeader('Warning') : undefined;
    const before = earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [String(earlier)];
    headers.Warning = [...before, ...opts.warnings.map((w) => `299 - ${JSON.stringify(w)}`)];
  }
  let payload: Buffer | string = text;
  if (opts.compress && text.length >= GZIP_MIN_BYTES && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    payload = gzipSync(bytesAsText ? Buffer.from(text as string, 'latin1') : text);
    bytesAsText = false;
    headers['Content-Encoding'] = 'gzip';
    headers.Vary = headers.Vary ? `${String(headers.Vary)}, Accept-Encoding` : 'Accept-Encoding';
  }
  headers['Content-Length'] = String(bytesAsText ? payload.length : Buffer.byteLength(payload));
  res.writeHead(status, headers);
  endWith(res, payload, bytesAsText);
}

/**
 * Ends the response with its body. A small binary body (protobuf, CBOR, gzip) goes as a latin1
 * string, which maps each byte to one character and back: Node's http joins a string body with
 * the header block into one socket write, but writes a Buffer body apart from it (a writev of two
 * chunks through TLS), which cost the server about 1.5 µs more a request, as much as the protobuf
 * codec saves on a small object. Larger bodies are not worth the copy. bytesAsText: the payload is
 * such a string already (a protobuf body encoded straight to it).
 */
function endWith(res: ServerResponse, payload: string | Buffer, bytesAsText: boolean): void {
  if (bytesAsText) res.end(payload, 'latin1');
  else if (typeof payload !== 'string' && payload.length <= ONE_WRITE_BYTES) res.end(payload.toString('latin1'), 'latin1');
  else res.end(payload);
}

/**
 * Store errors that reach the edge: an unreachable store is 503 (clients retry), a revision
 * beyond the store's is 504 "Too large resource version", a compacted one 410 (as upstream maps
 * etcd's errors). Anything else stays an internal error.
 */
function fromStorage(err: unknown): ApiError | undefined {
  if (!(err instanceof StorageError)) return undefined;
  switch (err.code) {
    case 'Unavailable':
      return new ApiError('ServiceUnavailable', `the storage backend is unavailable: ${err.message}`, { retryAfterSeconds: 1 });
    case 'FutureRevision':
      return new ApiError('Timeout', `Too large resource version: ${err.message}`, { retryAfterSeconds: 1 });
    case 'Compacted':
      return new ApiError('Expired', `too old resource version: ${err.message}`);
  }
  return undefined;
}

/**
 * Every error answer is a Status object (section 7). Non-ApiErrors become 500 without leaking
 * internals. opts.cbor: CBOR is served (the CBORServingAndStorage gate).
 */
export function sendError(req: IncomingMessage, res: ServerResponse, err: unknown, onInternal?: (err: unknown) => void, opts: { cbor?: boolean } = {}): void {
  const e = err instanceof ApiError ? err : fromStorage(err);
  if (!e) onInternal?.(err);
  const status = e ?? new ApiError('InternalError', 'Internal error occurred: an unexpected error happened; see the server log');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  const retry = status.details?.retryAfterSeconds;
  if (retry) headers['Retry-After'] = String(retry);
  if (status.code === 401) headers['WWW-Authenticate'] = 'Bearer realm="svc"';
  // A client that asked for protobuf or CBOR gets its Status so, as upstream answers errors.
  const binary = binaryReply(req.headers.accept, opts);
  send(req, res, status.code, status.toStatus(), {
    headers,
    protobuf: binary === 'protobuf' ? statusSchema : undefined,
    cbor: binary === 'cbor' ? { schema: statusSchema } : undefined,
  });
}
