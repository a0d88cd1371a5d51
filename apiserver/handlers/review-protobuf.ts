import { ApiError } from '../api/errors';

/**
 * Decoding of the authorization review types from Kubernetes' protobuf wire form, because stock
 * kubectl (`kubectl auth can-i`) posts SelfSubjectAccessReview and SelfSubjectRulesReview as
 * application/vnd.kubernetes.protobuf through its typed client. The body is the runtime.Unknown
 * envelope ("k8s\0" magic, typeMeta, raw) around the message of authorization/v1 generated.proto;
 * only the fields the review handlers read are decoded, into the JSON shape.
 */

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Field = { no: number; wire: number; varint?: number; bytes?: Buffer };

function readVarint(buf: Buffer, pos: { i: number }): number {
  let v = 0;
  let mul = 1;
  for (let n = 0; n < 10; n++) {
    if (pos.i >= buf.length) throw bad('truncated varint');
    const c = buf[pos.i++];
    v += (c & 0x7f) * mul;
    if ((c & 0x80) === 0) return v;
    mul *= 128;
  }
  throw bad('varint too long');
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const pos = { i: 0 };
  while (pos.i < buf.length) {
    const key = readVarint(buf, pos);
    const no = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ no, wire, varint: readVarint(buf, pos) });
    else if (wire === 2) {
      const len = readVarint(buf, pos);
      if (pos.i + len > buf.length) throw bad('truncated field');
      out.push({ no, wire, bytes: buf.subarray(pos.i, pos.i + len) });
      pos.i += len;
    } else if (wire === 1) pos.i += 8;
    else if (wire === 5) pos.i += 4;
    else throw bad(`unsupported wire type ${wire}`);
  }
  return out;
}

function bad(why: string): ApiError {
  return new ApiError('BadRequest', `the body of the request could not be decoded as protobuf: ${why}`);
}

const text = (fs: Field[], no: number): string | undefined => {
  const f = fs.filter((x) => x.no === no && x.bytes).pop();
  return f ? f.bytes!.toString('utf8') : undefined;
};
const texts = (fs: Field[], no: number): string[] => fs.filter((x) => x.no === no && x.bytes).map((x) => x.bytes!.toString('utf8'));
const msg = (fs: Field[], no: number): Field[] | undefined => {
  const f = fs.filter((x) => x.no === no && x.bytes).pop();
  return f ? fields(f.bytes!) : undefined;
};

function setIf(o: Record<string, unknown>, k: string, v: unknown): void {
  if (v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)) o[k] = v;
}

function selector(fs: Field[] | undefined): Record<string, unknown> | undefined {
  if (!fs) return undefined;
  const o: Record<string, unknown> = {};
  setIf(o, 'rawSelector', text(fs, 1));
  const reqs = fs.filter((x) => x.no === 2 && x.bytes).map((x) => {
    const r = fields(x.bytes!);
    return { key: text(r, 1) ?? '', operator: text(r, 2) ?? '', values: texts(r, 3) };
  });
  setIf(o, 'requirements', reqs);
  return Object.keys(o).length ? o : undefined;
}

function resourceAttributes(fs: Field[] | undefined): Record<string, unknown> | undefined {
  if (!fs) return undefined;
  const o: Record<string, unknown> = {};
  ['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'].forEach((k, i) => setIf(o, k, text(fs, i + 1)));
  setIf(o, 'fieldSelector', selector(msg(fs, 8)));
  setIf(o, 'labelSelector', selector(msg(fs, 9)));
  return o;
}

function nonResourceAttributes(fs: Field[] | undefined): Record<string, unknown> | undefined {
  if (!fs) return undefined;
  const o: Record<string, unknown> = {};
  setIf(o, 'path', text(fs, 1));
  setIf(o, 'verb', text(fs, 2));
  return o;
}

function accessSpec(fs: Field[] | undefined, withSubject: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (!fs) return o;
  setIf(o, 'resourceAttributes', resourceAttributes(msg(fs, 1)));
  setIf(o, 'nonResourceAttributes', nonResourceAttributes(msg(fs, 2)));
  if (withSubject) {
    setIf(o, 'user', text(fs, 3));
    setIf(o, 'groups', texts(fs, 4));
    const extra: Record<string, string[]> = {};
    for (const e of fs.filter((x) => x.no === 5 && x.bytes)) {
      const entry = fields(e.bytes!);
      const v = msg(entry, 2);
      extra[text(entry, 1) ?? ''] = v ? texts(v, 1) : [];
    }
    if (Object.keys(extra).length) o.extra = extra;
    setIf(o, 'uid', text(fs, 6));
  }
  return o;
}

/** True when the body starts with the protobuf envelope magic. */
export function isProtobufEnvelope(body: Buffer): boolean {
  return body.length >= 4 && body.subarray(0, 4).equals(MAGIC);
}

/** Decodes an enveloped review object into its JSON shape (apiVersion, kind, metadata, spec). */
export function decodeReviewProtobuf(body: Buffer): Record<string, unknown> {
  if (!isProtobufEnvelope(body)) throw bad('missing the k8s protobuf envelope');
  const unknown = fields(body.subarray(4));
  const typeMeta = msg(unknown, 1) ?? [];
  const apiVersion = text(typeMeta, 1) ?? '';
  const kind = text(typeMeta, 2) ?? '';
  const encoding = text(unknown, 3);
  if (encoding) throw bad(`unsupported content encoding ${encoding}`);
  const raw = unknown.filter((x) => x.no === 2 && x.bytes).pop()?.bytes ?? Buffer.alloc(0);
  const top = fields(raw);
  const meta = msg(top, 1) ?? [];
  const metadata: Record<string, unknown> = {};
  setIf(metadata, 'name', text(meta, 1));
  setIf(metadata, 'namespace', text(meta, 3));
  const specFields = msg(top, 2);
  let spec: Record<string, unknown>;
  switch (kind) {
    case 'SelfSubjectRulesReview':
      spec = {};
      if (specFields) setIf(spec, 'namespace', text(specFields, 1));
      break;
    case 'SelfSubjectAccessReview':
      spec = accessSpec(specFields, false);
      break;
    case 'SubjectAccessReview':
    case 'LocalSubjectAccessReview':
      spec = accessSpec(specFields, true);
      break;
    default:
      throw new ApiError('BadRequest', `protobuf bodies are accepted only for authorization review kinds, not "${kind}"`);
  }
  return { apiVersion, kind, metadata, spec };
}
