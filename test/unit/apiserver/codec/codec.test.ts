import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import { decodeProto } from '../../../../apiserver/codec/decode';
import { encodeProto } from '../../../../apiserver/codec/encode';
import { decodeEnvelope, decodeObject, decodeWatchFrames, encodeObject, encodeWatchFrame } from '../../../../apiserver/codec/envelope';
import { hasProtobuf, planOf } from '../../../../apiserver/codec/plan';
import { parseTime } from '../../../../apiserver/codec/time';
import { listSchemaOf } from '../../../../apiserver/registry/meta-schemas';
import { any, bool, int32, int64, intOrStr, microTime, obj, ptr, quantity, str, time } from '../../../../apiserver/registry/schema-builders';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { podSchema } from '../../../../apiserver/registry/types/pod-schema';
import { fixtures, gvk, JSON_ONLY, missingFixtures, servedTypes } from './fixtures';
import { podFixture } from './pod-fixture';

test('every served kind has a protobuf form, and so does its list', (t) => {
  for (const type of servedTypes().filter((x) => !JSON_ONLY.has(gvk(x)))) {
    t.true(hasProtobuf(type.schema), `${type.group}/${type.version} ${type.kind}`);
    t.notThrows(() => planOf(listSchemaOf(type.schema)));
  }
  t.deepEqual(missingFixtures(), [], 'add a fixture for these kinds to test/unit/apiserver/codec/fixtures.ts');
});

test('every fixture survives encode and decode unchanged (envelope included)', (t) => {
  for (const f of fixtures()) {
    const bytes = encodeObject(f.schema, f.object);
    t.deepEqual(decodeObject(f.schema, bytes), f.object, f.name);
  }
});

test('the envelope: magic, runtime.Unknown with typeMeta and raw, empty encoding and type', (t) => {
  const bytes = encodeObject(configMapSchema, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
  t.deepEqual([...bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  const env = decodeEnvelope(bytes);
  t.is(env.apiVersion, 'v1');
  t.is(env.kind, 'ConfigMap');
  // ConfigMap {metadata 1 {name 1 "a"}, data 2 {key "k", value "v"}}: ascending field numbers.
  t.deepEqual([...env.raw], [0x0a, 0x03, 0x0a, 0x01, 0x61, 0x12, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76]);
  // The trailing contentEncoding (3) and contentType (4) are written empty, as Go writes them.
  t.deepEqual([...bytes.subarray(bytes.length - 4)], [0x1a, 0x00, 0x22, 0x00]);
});

const scalars = obj('test.Scalars', {
  s: [1, str()],
  i32: [2, int32()],
  i64: [3, int64()],
  b: [4, bool()],
  keptS: [5, ptr(str())],
  keptI: [6, ptr(int64())],
  keptB: [7, ptr(bool())],
  ios: [8, intOrStr()],
  q: [9, quantity()],
  t: [10, time()],
  mt: [11, microTime()],
  nested: [12, obj('test.Nested', { x: [1, str()] })],
});

test('zero scalars: dropped unless the field is a pointer or not omitempty; empty messages kept; empty times dropped', (t) => {
  // What Go writes for a struct with every field at its zero value (non-pointer fields are always written).
  const goZero = Buffer.from([0x0a, 0x00, 0x10, 0x00, 0x18, 0x00, 0x20, 0x00, 0x2a, 0x00, 0x30, 0x00, 0x38, 0x00, 0x42, 0x00, 0x4a, 0x00, 0x52, 0x00, 0x5a, 0x00, 0x62, 0x00]);
  t.deepEqual(decodeProto(scalars, goZero), { keptS: '', keptI: 0, keptB: false, nested: {} });
  const values = { s: 'x', i32: -1, i64: -(2 ** 40), b: true, ios: 'http', q: '1Gi', t: '1969-12-31T23:59:59Z', mt: '2025-01-02T03:04:05.000006Z', nested: {} };
  t.deepEqual(decodeProto(scalars, encodeProto(scalars, values)), values);
  t.deepEqual(decodeProto(scalars, encodeProto(scalars, { ios: 8080 })), { ios: 8080 });
});

test('integers: negative int32 and int64 take ten bytes; int64 is exact to 2^53', (t) => {
  const s = obj('test.Ints', { a: [1, int32()], b: [2, int64()] });
  t.deepEqual([...encodeProto(s, { a: -1 })], [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  for (const b of [1, 127, 128, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1, -1, -(2 ** 31), -(2 ** 53 - 1)]) {
    t.deepEqual(decodeProto(s, encodeProto(s, { b })), { b }, String(b));
  }
  t.deepEqual(decodeProto(s, encodeProto(s, { a: -(2 ** 31) })), { a: -(2 ** 31) });
});

test('Time keeps whole seconds, MicroTime microseconds, both written as UTC', (t) => {
  const s = obj('test.Times', { t: [1, time()], mt: [2, microTime()] });
  const back = decodeProto(s, encodeProto(s, { t: '2025-03-01T14:00:00.9+02:00', mt: '2025-03-01T12:00:00.1234567Z' }));
  t.deepEqual(back, { t: '2025-03-01T12:00:00Z', mt: '2025-03-01T12:00:00.123456Z' });
  t.deepEqual(decodeProto(s, encodeProto(s, { t: '0099-01-01T00:00:00Z' })), { t: '0099-01-01T00:00:00Z' }, 'years below 100 are not read as 19xx');
});

test('the fast path for canonical times agrees with the general parser', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -62135596800, max: 253402300799 }), (seconds) => {
      const canonical = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/^\+0*(\d{4})/, '$1');
      const viaOffset = canonical.replace('Z', '+00:00');
      return parseTime(canonical, false)?.seconds === seconds && parseTime(viaOffset, false)?.seconds === seconds;
    }),
    { numRuns: 2000 },
  );
  t.is(parseTime('2025-03-01T12:00:0xZ', false), undefined);
  for (const bad of ['2025-13-01T12:00:00Z', '2025-02-29T12:00:00Z', '2025-02-29T12:00:00+01:00', '2025-04-31T00:00:00.5Z', '2025-01-01T24:00:00Z']) {
    t.is(parseTime(bad, true), undefined, bad);
  }
  t.is(parseTime('2024-02-29T12:00:00+01:00', false)?.seconds, Date.parse('2024-02-29T11:00:00Z') / 1000);
});

test('long strings and large messages get multi-byte lengths', (t) => {
  const big = { ...podFixture, metadata: { ...podFixture.metadata, annotations: { a: 'é'.repeat(40000), b: 'x'.repeat(130) } } };
  t.deepEqual(decodeObject(podSchema, encodeObject(podSchema, big)), big);
});

test('unknown fields of every wire type are skipped; repeated scalars may come packed', (t) => {
  const s = obj('test.Skip', { x: [1, str()], list: [2, { type: 'array', items: int64(), listType: 'atomic' }] });
  const unknown = [0x50, 0x96, 0x01, 0x59, 1, 2, 3, 4, 5, 6, 7, 8, 0x62, 0x02, 0x68, 0x69, 0x6d, 1, 2, 3, 4, 0x73, 0x08, 0x01, 0x74];
  const packed = [0x12, 0x03, 0x01, 0x96, 0x01];
  const body = Buffer.from([...unknown, 0x0a, 0x01, 0x7a, ...packed, 0x10, 0x05]);
  t.deepEqual(decodeProto(s, body), { x: 'z', list: [1, 150, 5] });
});

function isBadRequest(t: ExecutionContext, f: () => unknown, message?: RegExp): void {
  const e = t.throws(f, { instanceOf: ApiError });
  t.is(e?.code, 400);
  if (message) t.regex(e.message, message);
}

test('malformed bodies are 400s naming the problem', (t) => {
  const good = encodeObject(configMapSchema, configMapFixtureSmall());
  isBadRequest(t, () => decodeObject(configMapSchema, Buffer.from('{"kind":"ConfigMap"}')), /protobuf prefix/);
  // Every truncation is a 400 or, where it falls between two fields, a shorter object: never another error.
  let refused = 0;
  for (let n = 0; n < good.length; n++) {
    try {
      decodeObject(configMapSchema, good.subarray(0, n));
    } catch (err) {
      t.true(err instanceof ApiError && err.code === 400, String(err));
      refused++;
    }
  }
  t.true(refused > good.length / 2);
  isBadRequest(t, () => decodeProto(configMapSchema, Buffer.from([0x0a, 0x7f, 0x00])), /runs past the end/);
  isBadRequest(t, () => decodeProto(configMapSchema, Buffer.from([0x08, 0x01])), /wire type 0, want 2/);
  isBadRequest(t, () => decodeProto(configMapSchema, Buffer.from([0x7f])), /unexpected wire type 7/);
  isBadRequest(t, () => decodeProto(configMapSchema, Buffer.from([0x0a, 0x0b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])), /varint/);
  const gzipped = Buffer.concat([good.subarray(0, good.length - 4), Buffer.from([0x1a, 0x04]), Buffer.from('gzip'), Buffer.from([0x22, 0x00])]);
  isBadRequest(t, () => decodeObject(configMapSchema, gzipped), /content encoding "gzip"/);
  const rawNotJson = obj('test.Raw', { f: [1, { type: 'any', raw: 'k8s.io.apimachinery.pkg.runtime.RawExtension' }] });
  isBadRequest(t, () => decodeProto(rawNotJson, Buffer.from([0x0a, 0x03, 0x0a, 0x01, 0x7b])), /does not hold JSON/);
  // Deprecated groups nest no deeper than 32.
  isBadRequest(t, () => decodeProto(configMapSchema, Buffer.from(Array(40).fill(0x53))), /nested too deeply/);
});

test('random corruption of a pod body is a 400 or a decoded object, never another error', (t) => {
  const good = encodeObject(podSchema, podFixture);
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
      const bad = Buffer.from(good);
      for (const [at, v] of edits) bad[at] = v;
      try {
        decodeObject(podSchema, bad);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 400) throw err;
      }
    }),
    { numRuns: 2000 },
  ),
  );
});

function configMapFixtureSmall(): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' }, binaryData: { b: 'AAE=' } };
}

test('schemas without a protobuf form are refused by name', (t) => {
  t.false(hasProtobuf(obj({ a: str() })));
  t.throws(() => planOf(obj('test.A', { a: [1, any()] })), { message: /test\.A\.a is any JSON/ });
  t.throws(() => planOf(obj('test.B', { b: [1, { type: 'integer' }] })), { message: /test\.B\.b is an integer without/ });
  t.throws(() => planOf(obj('test.C', { c: [1, obj({ x: str() })] })), { message: /test\.C\.c is an object without/ });
  t.throws(() => planOf(obj('test.D', { a: [1, str()], b: [1, str()] })), { message: /field number 1 twice/ });
});

test('a stored value of the wrong type is a 500 naming the field, not a crash', (t) => {
  const e = t.throws(() => encodeProto(podSchema, { spec: { containers: [{ name: 7 }] } }), { instanceOf: ApiError });
  t.is(e?.code, 500);
  t.regex(e.message, /k8s\.io\.api\.core\.v1\.Container field name is not a string/);
});

test('lists: metadata 1, items 2 (items without their type)', (t) => {
  const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9', continue: 'c', remainingItemCount: 0 }, items: [{ metadata: { name: 'a' }, data: { x: '1' } }, { metadata: { name: 'b' } }] };
  const schema = listSchemaOf(configMapSchema);
  t.is(schema.proto?.name, 'k8s.io.api.core.v1.ConfigMapList');
  t.is(listSchemaOf(configMapSchema), schema, 'cached: one plan per kind');
  t.deepEqual(decodeObject(schema, encodeObject(schema, list)), list);
});

test('watch frames: big-endian length, WatchEvent {type, RawExtension{enveloped object}}', (t) => {
  const frames = Buffer.concat([
    encodeWatchFrame('ADDED', configMapSchema, configMapFixtureSmall()),
    encodeWatchFrame('DELETED', configMapSchema, { ...configMapFixtureSmall(), data: { k: 'w'.repeat(300) } }),
  ]);
  t.is(frames.readUInt32BE(0), encodeWatchFrame('ADDED', configMapSchema, configMapFixtureSmall()).length - 4);
  const { events, rest } = decodeWatchFrames(Buffer.concat([frames, Buffer.from([0, 0, 0, 9, 1])]));
  t.deepEqual(rest, Buffer.from([0, 0, 0, 9, 1]));
  t.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'DELETED'],
  );
  t.deepEqual(decodeObject(configMapSchema, events[0].object), configMapFixtureSmall());
  t.is((decodeObject(configMapSchema, events[1].object).data as Record<string, string>).k.length, 300);
});

test('generated encoders: property names that need quoting, and a message that contains itself', (t) => {
  const odd = obj('test.Odd', { 'a"b': [1, str()], 'c\\d': [2, str()], "e'f\u2028": [3, int64()] });
  const v = { 'a"b': 'x', 'c\\d': 'y', "e'f\u2028": 5 };
  t.deepEqual(decodeProto(odd, encodeProto(odd, v)), v);
  const node = obj('test.Node', { name: [1, str()] });
  (node.properties as Record<string, unknown>).child = node;
  (node.proto as { fields: Record<string, number> }).fields = { name: 1, child: 2 };
  const tree = { name: 'a', child: { name: 'b', child: { name: 'c' } } };
  t.deepEqual(decodeProto(node, encodeProto(node, tree)), tree);
  t.deepEqual([...encodeProto(node, { name: 'a', child: { name: 'b' } })], [0x0a, 0x01, 0x61, 0x12, 0x03, 0x0a, 0x01, 0x62]);
});
