/**
 * The CBOR codec (issue 17, item 2): every served kind survives JSON → CBOR → JSON through its
 * schema; the bytes follow upstream's serializer (checked by hand below); the decoder refuses what
 * upstream's refuses with a 400, and under random input never fails otherwise and never hands out
 * a value deeper than its bound.
 */
import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import type { Schema } from '../../../../apiserver/api/schema';
import { decodeCbor } from '../../../../apiserver/codec/cbor-decode';
import { encodeCbor, encodeCborWatchEvent } from '../../../../apiserver/codec/cbor-encode';
import { loadCbor } from '../../../../apiserver/codec/cbor-lib';
import { isSelfDescribedCbor } from '../../../../apiserver/codec/cbor-wire';
import { maxNestingDepth, measureJson } from '../../../../apiserver/patch/json-bounds';
import { listSchemaOf, statusSchema } from '../../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { podSchema } from '../../../../apiserver/registry/types/pod-schema';
import { fixtures, missingFixtures } from './fixtures';
import { podFixture } from './pod-fixture';

const limits = { maxDepth: maxNestingDepth };

test.before(async () => {
  await loadCbor();
});

function decode(hex: string | Buffer, schema?: Schema): unknown {
  return decodeCbor(typeof hex === 'string' ? Buffer.from(hex.replace(/\s+/g, ''), 'hex') : hex, schema, limits);
}

/** A CBOR byte string (major type 2) of s's UTF-8, short form, as hand-written expectations. */
function bs(s: string): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length >= 24) throw new Error('bs() writes short strings only');
  return (0x40 + b.length).toString(16) + b.toString('hex');
}

/** A CBOR text string (major type 3) of s's UTF-8, short form. */
function ts(s: string): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length >= 24) throw new Error('ts() writes short strings only');
  return (0x60 + b.length).toString(16) + b.toString('hex');
}

function isBadRequest(t: import('ava').ExecutionContext, f: () => unknown, message: RegExp): void {
  const e = t.throws(f, { instanceOf: ApiError }, message.source);
  t.is(e?.code, 400);
  t.regex(e?.message ?? '', message);
}

test('every served kind (and its list) survives JSON → CBOR → JSON through its schema', (t) => {
  t.deepEqual(missingFixtures(), [], 'every served kind has a fixture');
  for (const f of fixtures({ protobuf: false })) {
    const bytes = encodeCbor(f.schema, f.object);
    t.true(isSelfDescribedCbor(bytes), f.name);
    t.deepEqual(decodeCbor(bytes, f.schema, limits), f.object, f.name);
    const list = { apiVersion: f.object.apiVersion, kind: `${String(f.object.kind)}List`, metadata: { resourceVersion: '7' }, items: [f.object, f.object] };
    t.deepEqual(decodeCbor(encodeCbor(listSchemaOf(f.schema), list), listSchemaOf(f.schema), limits), list, `${f.name} list`);
  }
});

test('the bytes are upstream\'s: tag 55799, byte-string keys and strings, tag 22 around []byte, shortest floats', (t) => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' }, binaryData: { b: Buffer.from([0, 1, 0xff]).toString('base64') } };
  const want = [
    'd9d9f7', // tag 55799, self-described CBOR
    'a5', // map of 5, in the object's order
    bs('apiVersion') + bs('v1'),
    bs('kind') + bs('ConfigMap'),
    bs('metadata') + 'a1' + bs('name') + bs('a'),
    bs('data') + 'a1' + bs('k') + bs('v'),
    bs('binaryData') + 'a1' + bs('b') + 'd6' + '430001ff', // tag 22 (expected later base64), bytes 00 01 ff
  ].join('');
  t.is(encodeCbor(configMapSchema, cm).toString('hex'), want);
  // Integers as integers (negative: -1-n), floats in their shortest exact form, booleans and null.
  t.is(encodeCbor(undefined, [0, 23, 24, 256, -1, -25, 1.5, 0.1, true, false, null]).toString('hex'), 'd9d9f78b' + '00' + '17' + '1818' + '190100' + '20' + '3818' + 'f93e00' + 'fb3fb999999999999a' + 'f5f4f6');
  // A 'double' field is a float even when whole (Go's float64), written as a half when exact.
  t.is(encodeCbor({ type: 'number', format: 'double' }, 1).toString('hex'), 'd9d9f7f93c00');
  // Absent members are left out; a Status has a schema of its own.
  t.is(encodeCbor(statusSchema, { kind: 'Status', message: undefined }).toString('hex'), 'd9d9f7a1' + bs('kind') + bs('Status'));
});

test('a watch event is a self-described map {type, object} whose object is self-described too', (t) => {
  const ev = encodeCborWatchEvent('ADDED', configMapSchema, { kind: 'ConfigMap' });
  t.is(ev.toString('hex'), 'd9d9f7a2' + bs('type') + bs('ADDED') + bs('object') + 'd9d9f7a1' + bs('kind') + bs('ConfigMap'));
  t.deepEqual(decode(ev), { type: 'ADDED', object: { kind: 'ConfigMap' } });
});

test('what client-go and other encoders send is read: text or byte strings, tags 21-23, times, indefinite lengths', (t) => {
  // client-go: byte-string keys and values, []byte in tag 22.
  t.deepEqual(decode('d9d9f7 a2' + bs('kind') + bs('Secret') + bs('data') + 'a1' + bs('k') + 'd6 43 0001ff', configMapSchema), {
    kind: 'Secret',
    data: { k: 'AAH/' },
  });
  // A generic encoder: text keys and strings; without the self-described tag.
  t.deepEqual(decode('a1' + ts('kind') + ts('ConfigMap')), { kind: 'ConfigMap' });
  // Untagged, a []byte field's string is its base64 text (upstream's ByteStringExpectedBase64).
  t.deepEqual(decode('a1' + ts('binaryData') + 'a1' + ts('b') + bs('AAE='), configMapSchema), { binaryData: { b: 'AAE=' } });
  // Tagged bytes: a []byte field always gets standard base64; elsewhere the tag's encoding applies.
  t.deepEqual(decode('a1' + ts('binaryData') + 'a1' + ts('b') + 'd5 42 fbff', configMapSchema), { binaryData: { b: '+/8=' } });
  t.is(decode('d5 42 fbff'), '-_8');
  t.is(decode('d6 42 fbff'), '+/8=');
  t.is(decode('d7 42 fbff'), 'fbff');
  // Tag 0 (RFC 3339 text) and tag 1 (seconds, with a fraction) are times as JSON writes them.
  t.is(decode('c0' + ts('2013-03-21T20:04:00Z')), '2013-03-21T20:04:00Z');
  t.is(decode('c1 1a 514b67b0'), '2013-03-21T20:04:00Z');
  t.is(decode('c1 fb 41d452d9ec200000'), '2013-03-21T20:04:00.5Z');
  // Unknown tags and nested self-described tags stand for their content.
  t.deepEqual(decode('d9d9f7 d9d9f7 d8 63 a1' + ts('a') + '01'), { a: 1 });
  // Indefinite-length maps and arrays (upstream reads them; no Kubernetes encoder writes them).
  t.deepEqual(decode('bf' + ts('a') + '9f 01 02 ff ff'), { a: [1, 2] });
  // Integers up to int64 (beyond 2^53 as the nearest double, as JSON.parse reads them), half and single floats.
  t.is(decode('1b 7fffffffffffffff'), 2 ** 63);
  t.deepEqual(decode('83 f93c00 fa47c35000 3b 7fffffffffffffff'), [1, 100000, -(2 ** 63)]);
  // "__proto__" is a key like any other.
  const proto = decode('a1' + ts('__proto__') + 'a1' + ts('x') + '01') as Record<string, unknown>;
  t.true(Object.prototype.hasOwnProperty.call(proto, '__proto__'));
  t.is(Object.getPrototypeOf(proto), Object.prototype);
});

test('what upstream refuses is a 400 naming the problem and where', (t) => {
  isBadRequest(t, () => decode(''), /the body is empty/);
  isBadRequest(t, () => decode('a1' + ts('metadata') + 'a2' + ts('name') + ts('a') + bs('name') + ts('b')), /duplicate map key "name" at \.metadata/);
  isBadRequest(t, () => decode('a1' + ts('a') + '62c328'), /a text string is not valid UTF-8 at \.a/);
  isBadRequest(t, () => decode('a1' + ts('a') + '63eda080'), /not valid UTF-8/); // an encoded surrogate
  isBadRequest(t, () => decode('a1' + ts('a') + '42c328'), /a byte string used as text is not valid UTF-8 at \.a/);
  isBadRequest(t, () => decode('a1 42c328 01'), /not valid UTF-8/);
  isBadRequest(t, () => decode('a1 01 01'), /a map key is an integer: keys must be text or byte strings/);
  isBadRequest(t, () => decode('a1 c0' + ts('a') + '01'), /a map key is tagged/);
  isBadRequest(t, () => decode('82 01 f97e00'), /NaN is not allowed \(JSON has no such number\) at \[1\]/);
  isBadRequest(t, () => decode('f97c00'), /Infinity is not allowed/);
  isBadRequest(t, () => decode('f7'), /undefined is not allowed/);
  isBadRequest(t, () => decode('f0'), /simple values are not supported/);
  isBadRequest(t, () => decode('1b ffffffffffffffff'), /overflows int64/);
  isBadRequest(t, () => decode('c2 49 010000000000000000'), /bignums \(tag 2\) are not allowed/);
  isBadRequest(t, () => decode('c0 01'), /tag 0 holds something other than a text string/);
  isBadRequest(t, () => decode('c0' + ts('yesterday')), /tag 0 holds "yesterday", not an RFC 3339 time/);
  isBadRequest(t, () => decode('c1' + ts('x')), /tag 1 holds a text string/);
  isBadRequest(t, () => decode('c1 1b 7fffffffffffffff'), /out of range/);
  isBadRequest(t, () => decode('c0 a0'), /tag 0 encloses a map/);
  isBadRequest(t, () => decode('01 01'), /1 byte follow the data item/);
  isBadRequest(t, () => decode('a2' + ts('a') + '01'), /unexpected end of data/);
  isBadRequest(t, () => decode('62 61'), /not enough data/);
  isBadRequest(t, () => decode('ff'), /unexpected break/);
  isBadRequest(t, () => decode('82 01 ff'), /unexpected break/);
  isBadRequest(t, () => decode('1c'), /invalid minor/);
  // cborg refuses indefinite-length strings (upstream reads them; no Kubernetes encoder writes them).
  isBadRequest(t, () => decode('7f 6161 ff'), /indefinite length/);
});

test('nesting is bounded as for JSON bodies: 512 levels are read, 513 refused', (t) => {
  const nested = (n: number) => Buffer.concat([Buffer.alloc(n, 0x81), Buffer.from([0x01])]);
  t.is(measureJson(decode(nested(maxNestingDepth))).depth, maxNestingDepth);
  isBadRequest(t, () => decode(nested(maxNestingDepth + 1)), new RegExp(`exceeded max depth of ${maxNestingDepth} at …`));
  // Tags do not nest: a long chain of them is still one level.
  const tagged = Buffer.concat([...(Array(1000).fill(Buffer.from('d9d9f7', 'hex')) as Buffer[]), Buffer.from([0x80])]);
  t.deepEqual(decode(tagged), []);
});

test('JSON values survive encode and decode', (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
      const json = JSON.parse(JSON.stringify(v)) as unknown;
      t.deepEqual(decodeCbor(encodeCbor(undefined, json), undefined, limits), json);
    }),
    { numRuns: 500 },
  );
});

test('random and corrupted bodies are a value or a 400, never another error, never deeper than the bound', (t) => {
  const good = encodeCbor(podSchema, podFixture);
  const check = (bytes: Uint8Array, maxDepth: number) => {
    try {
      const v = decodeCbor(bytes, podSchema, { maxDepth });
      if (measureJson(v).depth > maxDepth) throw new Error(`decoded a value deeper than ${maxDepth}`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 400) throw err;
    }
  };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), fc.integer({ min: 1, max: 8 }), (bytes, maxDepth) => check(bytes, maxDepth)),
    { numRuns: 3000 },
  );
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
      const bad = Buffer.from(good);
      for (const [at, v] of edits) bad[at] = v;
      check(bad, maxNestingDepth);
    }),
    { numRuns: 3000 },
  ),
  );
});
