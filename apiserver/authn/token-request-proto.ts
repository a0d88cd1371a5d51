/**
 * Reads the protobuf TokenRequest that client-go (kubectl create token) sends to the
 * serviceaccounts token sub-resource: the "k8s\0" envelope (runtime.Unknown: 1 typeMeta
 * {1 apiVersion, 2 kind}, 2 raw) around authentication/v1 TokenRequest (2 spec: 1 audiences,
 * 3 boundObjectRef {1 kind, 2 apiVersion, 3 name, 4 uid}, 4 expirationSeconds). Field numbers
 * are upstream's wire contract; only the fields the token sub-resource reads are decoded.
 */

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export class ProtobufDecodeError extends Error {}

interface Field {
  no: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
}

function* fields(buf: Buffer): Generator<Field> {
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (i >= buf.length || shift > 63n) throw new ProtobufDecodeError('truncated varint');
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, varint: varint() };
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new ProtobufDecodeError('truncated field');
      yield { no, wire, bytes: buf.subarray(i, i + len) };
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new ProtobufDecodeError(`unsupported wire type ${wire}`);
  }
}

/** The JSON-shaped TokenRequest of a protobuf body; throws ProtobufDecodeError when it is not one. */
export function decodeTokenRequestProto(body: Buffer): { apiVersion: string; kind: string; spec: Record<string, unknown> } {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new ProtobufDecodeError('missing the k8s protobuf envelope');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  for (const f of fields(body.subarray(4))) {
    if (f.no === 1 && f.bytes) {
      for (const t of fields(f.bytes)) {
        if (t.no === 1 && t.bytes) apiVersion = t.bytes.toString('utf8');
        if (t.no === 2 && t.bytes) kind = t.bytes.toString('utf8');
      }
    } else if (f.no === 2 && f.bytes) raw = f.bytes;
  }
  const spec: Record<string, unknown> = {};
  for (const f of fields(raw)) {
    if (f.no !== 2 || !f.bytes) continue;
    const audiences: string[] = [];
    for (const s of fields(f.bytes)) {
      if (s.no === 1 && s.bytes) audiences.push(s.bytes.toString('utf8'));
      else if (s.no === 4 && s.varint !== undefined) spec.expirationSeconds = Number(BigInt.asIntN(64, s.varint));
      else if (s.no === 3 && s.bytes) {
        const ref: Record<string, string> = {};
        const names = ['', 'kind', 'apiVersion', 'name', 'uid'];
        for (const r of fields(s.bytes)) if (r.bytes && names[r.no]) ref[names[r.no]] = r.bytes.toString('utf8');
        spec.boundObjectRef = ref;
      }
    }
    if (audiences.length > 0) spec.audiences = audiences;
  }
  return { apiVersion, kind, spec };
}
