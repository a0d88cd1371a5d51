import type { ObjectSchema } from '../api/schema';
import { BackWriter, WIRE_BYTES } from './back-writer';
import { decodeProtoRange } from './decode';
import { type CachedEncoding, writeCached } from './encoded-cache';
import { encoderOf } from './encoder-gen';
import { planOf } from './plan';
import { protobufError, Reader } from './reader';

/**
 * Kubernetes' protobuf framing (application/vnd.kubernetes.protobuf): a body is the magic
 * "k8s\0" and a runtime.Unknown {typeMeta 1 {apiVersion 1, kind 2}, raw 2, contentEncoding 3,
 * contentType 4} whose raw is the object's message. A watch stream (;stream=watch) is a sequence
 * of frames, each a 4-byte big-endian length and a meta/v1 WatchEvent {type 1, object 2
 * RawExtension {raw 1}} written without the envelope (upstream's raw serializer), whose object
 * raw is the enveloped object.
 */

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
/** An envelope without raw: the object's message is empty (shared; never written to). */
const NO_BYTES = Buffer.alloc(0);

type Json = Record<string, unknown>;

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

/** Whether a body starts with the protobuf magic. */
export function isProtobufEnvelope(body: Uint8Array): boolean {
  return body.length >= 4 && body[0] === 0x6b && body[1] === 0x38 && body[2] === 0x73 && body[3] === 0x00;
}

/**
 * The enveloped form of obj; its apiVersion and kind go to the envelope, the rest to raw. With a
 * cache, obj (or each item of a list) is a stored version a read returned unchanged: see EncodedCache.
 */
export function encodeObject(schema: ObjectSchema, obj: Json, cache?: CachedEncoding): Buffer {
  const w = takeWriter();
  writeEnveloped(w, schema, obj, cache);
  return output(w);
}

/**
 * As encodeObject, for a response body: a body of at most maxText bytes comes as a string of its
 * bytes (latin1, one character a byte: what respond.ts hands to Node so that the body goes out
 * with the headers in one socket write), copied once out of the writer rather than to a Buffer and
 * then to that string; a longer body as a Buffer.
 */
export function encodeObjectText(schema: ObjectSchema, obj: Json, cache: CachedEncoding | undefined, maxText: number): string | Buffer {
  const w = takeWriter();
  writeEnveloped(w, schema, obj, cache);
  if (w.mark() > maxText) return output(w);
  const text = w.buf.toString('latin1', w.pos);
  keep(w);
  return text;
}

/** Writes the envelope backwards (see BackWriter): its last field first, the magic last. */
function writeEnveloped(w: BackWriter, schema: ObjectSchema, obj: Json, cache?: CachedEncoding): void {
  const plan = planOf(schema);
  // contentType 4 and contentEncoding 3, empty: Go writes every field of Unknown.
  w.byte(0);
  w.byte((4 << 3) | WIRE_BYTES);
  w.byte(0);
  w.byte((3 << 3) | WIRE_BYTES);
  const raw = w.mark();
  if (cache) writeCached(w, plan, obj, cache);
  else encoderOf(plan)(w, obj);
  w.lengthSince(raw);
  w.byte((2 << 3) | WIRE_BYTES);
  const meta = w.mark();
  w.string(typeof obj.kind === 'string' ? obj.kind : '');
  w.byte((2 << 3) | WIRE_BYTES);
  w.string(typeof obj.apiVersion === 'string' ? obj.apiVersion : '');
  w.byte((1 << 3) | WIRE_BYTES);
  w.lengthSince(meta);
  w.byte((1 << 3) | WIRE_BYTES);
  w.raw(MAGIC);
}

/** The envelope of a protobuf body: its type and the object's message bytes. */
export function decodeEnvelope(body: Uint8Array): TypeMeta & { raw: Buffer } {
  const buf = asBuffer(body);
  const env = readEnvelope(buf);
  return { apiVersion: env.apiVersion, kind: env.kind, raw: env.rawEnd > env.rawStart ? buf.subarray(env.rawStart, env.rawEnd) : NO_BYTES };
}

/** The envelope's type and where its raw (the object's message) lies in buf. */
function readEnvelope(buf: Buffer): TypeMeta & { rawStart: number; rawEnd: number } {
  if (!isProtobufEnvelope(buf)) throw protobufError('the body does not start with the protobuf prefix "k8s\\x00"');
  const r = new Reader(buf, 4);
  let apiVersion = '';
  let kind = '';
  let rawStart = 0;
  let rawEnd = 0;
  let encoding = '';
  while (r.pos < r.end) {
    const tag = r.uint32();
    const no = tag >>> 3;
    if ((tag & 7) !== WIRE_BYTES || no < 1 || no > 4) {
      r.skipField(tag & 7);
      continue;
    }
    const n = r.length();
    if (no === 1) {
      // typeMeta, read by the same reader bounded to it (no second reader, no copy).
      const outer = r.end;
      r.end = r.pos + n;
      while (r.pos < r.end) {
        const t = r.uint32();
        if (t === ((1 << 3) | WIRE_BYTES)) apiVersion = r.string();
        else if (t === ((2 << 3) | WIRE_BYTES)) kind = r.string();
        else r.skipField(t & 7);
      }
      r.end = outer;
      continue;
    }
    if (no === 2) {
      rawStart = r.pos;
      rawEnd = r.pos + n;
    } else if (no === 3) encoding = buf.toString('utf8', r.pos, r.pos + n);
    r.pos += n;
  }
  if (encoding) throw protobufError(`unsupported content encoding "${encoding}"`);
  return { apiVersion, kind, rawStart, rawEnd };
}

function asBuffer(body: Uint8Array): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
}

/** Decodes an enveloped object; apiVersion and kind come from the envelope (and come first, as in JSON). */
export function decodeObject(schema: ObjectSchema, body: Uint8Array): Json {
  const buf = asBuffer(body);
  const env = readEnvelope(buf);
  const out: Json = {};
  if (env.apiVersion) out.apiVersion = env.apiVersion;
  if (env.kind) out.kind = env.kind;
  // The message is read where it lies in the body (no view of it made).
  return decodeProtoRange(schema, buf, env.rawStart, env.rawEnd, out);
}

/**
 * One watch stream frame: the length prefix and the WatchEvent whose object is obj, enveloped.
 * With a cache, obj is a stored version (an initial event of a watch): see EncodedCache.
 */
export function encodeWatchFrame(type: string, schema: ObjectSchema, obj: Json, cache?: CachedEncoding): Buffer {
  const w = takeWriter();
  // WatchEvent {type 1, object 2 RawExtension {raw 1: the enveloped object}}, written backwards.
  const end = w.mark();
  writeEnveloped(w, schema, obj, cache);
  w.lengthSince(end);
  w.byte((1 << 3) | WIRE_BYTES);
  w.lengthSince(end);
  w.byte((2 << 3) | WIRE_BYTES);
  w.string(type);
  w.byte((1 << 3) | WIRE_BYTES);
  const length = w.mark() - end;
  w.room(4);
  w.pos -= 4;
  w.buf.writeUInt32BE(length, w.pos);
  return output(w);
}

/**
 * One writer kept between encodings: most answers are small, and a fresh 4 KiB buffer for each
 * cost more than encoding it. A small output is copied out and the writer kept; a large one
 * takes the writer's buffer with it. (Encoding is synchronous, so one writer is never shared.)
 */
let spare: BackWriter | undefined;
const SPARE_BYTES = 64 * 1024;
const COPY_OUT_BYTES = 16 * 1024;

function takeWriter(): BackWriter {
  const w = spare ?? new BackWriter(SPARE_BYTES);
  spare = undefined;
  w.reset();
  return w;
}

function output(w: BackWriter): Buffer {
  const out = w.finish();
  if (out.length > COPY_OUT_BYTES || w.buf.length > 4 * SPARE_BYTES) return out;
  spare = w;
  return Buffer.from(out);
}

/** Keeps w for the next encoding once its output was copied out (unless it grew too big to keep). */
function keep(w: BackWriter): void {
  if (w.buf.length <= 4 * SPARE_BYTES) spare = w;
}

/** Splits a watch stream into its frames' WatchEvents: type and the enveloped object; rest is an incomplete frame. */
export function decodeWatchFrames(stream: Buffer): { events: Array<{ type: string; object: Buffer }>; rest: Buffer } {
  const events: Array<{ type: string; object: Buffer }> = [];
  let at = 0;
  while (stream.length - at >= 4) {
    const n = stream.readUInt32BE(at);
    if (stream.length - at - 4 < n) break;
    const r = new Reader(stream, at + 4, at + 4 + n);
    let type = '';
    let object: Buffer = Buffer.alloc(0);
    while (r.pos < r.end) {
      const tag = r.uint32();
      if (tag === ((1 << 3) | WIRE_BYTES)) type = r.string();
      else if (tag === ((2 << 3) | WIRE_BYTES)) {
        const len = r.length();
        const ext = new Reader(stream, r.pos, r.pos + len);
        r.pos += len;
        while (ext.pos < ext.end) {
          const t = ext.uint32();
          if (t === ((1 << 3) | WIRE_BYTES)) object = ext.bytes();
          else ext.skipField(t & 7);
        }
      } else r.skipField(tag & 7);
    }
    events.push({ type, object });
    at += 4 + n;
  }
  return { events, rest: stream.subarray(at) };
}
