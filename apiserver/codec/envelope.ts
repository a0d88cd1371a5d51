import type { ObjectSchema } from '../api/schema';
import { decodeProto } from './decode';
import { encodeMessage } from './encode';
import { planOf } from './plan';
import { protobufError, Reader } from './reader';
import { WIRE_BYTES, Writer } from './writer';

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

type Json = Record<string, unknown>;

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

/** Whether a body starts with the protobuf magic. */
export function isProtobufEnvelope(body: Uint8Array): boolean {
  return body.length >= 4 && body[0] === 0x6b && body[1] === 0x38 && body[2] === 0x73 && body[3] === 0x00;
}

/** The enveloped form of obj; its apiVersion and kind go to the envelope, the rest to raw. */
export function encodeObject(schema: ObjectSchema, obj: Json): Buffer {
  const w = new Writer();
  writeEnveloped(w, schema, obj);
  return w.finish();
}

function writeEnveloped(w: Writer, schema: ObjectSchema, obj: Json): void {
  const plan = planOf(schema);
  w.raw(MAGIC);
  w.tag(1, WIRE_BYTES);
  const meta = w.fork();
  w.tag(1, WIRE_BYTES);
  w.string(typeof obj.apiVersion === 'string' ? obj.apiVersion : '');
  w.tag(2, WIRE_BYTES);
  w.string(typeof obj.kind === 'string' ? obj.kind : '');
  w.join(meta);
  w.tag(2, WIRE_BYTES);
  const raw = w.fork();
  encodeMessage(w, plan, obj);
  w.join(raw);
  // contentEncoding and contentType, empty: Go writes every field of Unknown.
  w.tag(3, WIRE_BYTES);
  w.string('');
  w.tag(4, WIRE_BYTES);
  w.string('');
}

/** The envelope of a protobuf body: its type and the object's message bytes. */
export function decodeEnvelope(body: Uint8Array): TypeMeta & { raw: Buffer } {
  if (!isProtobufEnvelope(body)) throw protobufError('the body does not start with the protobuf prefix "k8s\\x00"');
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.length);
  const r = new Reader(buf, 4);
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  let encoding = '';
  while (r.pos < r.end) {
    const tag = r.uint32();
    const no = tag >>> 3;
    if ((tag & 7) !== WIRE_BYTES || no < 1 || no > 4) {
      r.skip(tag & 7);
      continue;
    }
    if (no === 1) {
      const n = r.length();
      const meta = new Reader(buf, r.pos, r.pos + n);
      r.pos += n;
      while (meta.pos < meta.end) {
        const t = meta.uint32();
        if (t === ((1 << 3) | WIRE_BYTES)) apiVersion = meta.string();
        else if (t === ((2 << 3) | WIRE_BYTES)) kind = meta.string();
        else meta.skip(t & 7);
      }
    } else if (no === 2) raw = r.bytes();
    else if (no === 3) encoding = r.string();
    else r.string();
  }
  if (encoding) throw protobufError(`unsupported content encoding "${encoding}"`);
  return { apiVersion, kind, raw };
}

/** Decodes an enveloped object; apiVersion and kind come from the envelope. */
export function decodeObject(schema: ObjectSchema, body: Uint8Array): Json {
  const env = decodeEnvelope(body);
  const obj = decodeProto(schema, env.raw);
  const out: Json = {};
  if (env.apiVersion) out.apiVersion = env.apiVersion;
  if (env.kind) out.kind = env.kind;
  return Object.assign(out, obj);
}

/** One watch stream frame: the length prefix and the WatchEvent whose object is obj, enveloped. */
export function encodeWatchFrame(type: string, schema: ObjectSchema, obj: Json): Buffer {
  const w = new Writer();
  w.raw(MAGIC); // 4 bytes, overwritten with the frame length below
  w.tag(1, WIRE_BYTES);
  w.string(type);
  w.tag(2, WIRE_BYTES);
  const ext = w.fork();
  w.tag(1, WIRE_BYTES);
  const raw = w.fork();
  writeEnveloped(w, schema, obj);
  w.join(raw);
  w.join(ext);
  const out = w.finish();
  out.writeUInt32BE(out.length - 4, 0);
  return out;
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
          else ext.skip(t & 7);
        }
      } else r.skip(tag & 7);
    }
    events.push({ type, object });
    at += 4 + n;
  }
  return { events, rest: stream.subarray(at) };
}
