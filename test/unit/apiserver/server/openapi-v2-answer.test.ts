/**
 * /openapi/v2 as upstream's kube-openapi handler answers it to caching clients (kubectl's HTTP cache
 * under --cache-dir): one ETag from the JSON document for both forms, 304s for If-None-Match and
 * If-Modified-Since, gzip when Accept-Encoding allows it.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';
import { openApiV2 } from '../../../../apiserver/server/openapi';
import { OPENAPI_V2_PROTOBUF, openApiV2Protobuf } from '../../../../apiserver/server/openapi-protobuf';
import { OpenApiV2Answers } from '../../../../apiserver/server/openapi-v2-answer';

const doc = openApiV2(makeBuiltinTypes(() => Date.now()), 'v1.33.0');
const other = openApiV2(makeBuiltinTypes(() => Date.now()).slice(0, 3), 'v1.33.0');
const at = (iso: string) => () => new Date(iso);

test('200 with the ETag upstream computes (quoted upper-case SHA-512 hex of the JSON), the same for both forms', (t) => {
  const a = new OpenApiV2Answers(at('2025-03-01T12:00:00Z'));
  const json = a.answer(doc, 'json', {});
  const etag = `"${createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase()}"`;
  t.is(json.status, 200);
  t.like(json.headers, { ETag: etag, 'Content-Type': 'application/json', 'Last-Modified': 'Sat, 01 Mar 2025 12:00:00 GMT', Vary: 'Accept' });
  t.deepEqual(JSON.parse(json.body!.toString('utf8')), doc);
  t.is(json.headers['Content-Length'], String(json.body!.length));
  const pb = a.answer(doc, 'protobuf', {});
  t.like(pb.headers, { ETag: etag, 'Content-Type': OPENAPI_V2_PROTOBUF });
  t.deepEqual(pb.body, openApiV2Protobuf(doc));
  t.false('Content-Encoding' in pb.headers, 'no gzip unless asked for');
});

test('If-None-Match naming the ETag (weakly, in a list, or *) is a 304 without a body; another tag is a 200', (t) => {
  const a = new OpenApiV2Answers(at('2025-03-01T12:00:00Z'));
  const etag = a.answer(doc, 'json', {}).headers.ETag;
  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    for (const as of ['json', 'protobuf'] as const) {
      const r = a.answer(doc, as, { 'if-none-match': inm });
      t.is(r.status, 304, inm);
      t.is(r.body, undefined);
      t.is(r.headers.ETag, etag);
      t.false('Content-Type' in r.headers);
      t.false('Last-Modified' in r.headers, 'as Go: no Last-Modified beside an ETag on a 304');
    }
  }
  t.is(a.answer(doc, 'json', { 'if-none-match': '"other"' }).status, 200);
  // If-None-Match decides alone: a date that would match does not make a non-matching tag a 304.
  t.is(a.answer(doc, 'json', { 'if-none-match': '"other"', 'if-modified-since': 'Sat, 01 Mar 2025 13:00:00 GMT' }).status, 200);
});

test('without If-None-Match, If-Modified-Since at or after Last-Modified is a 304', (t) => {
  const a = new OpenApiV2Answers(at('2025-03-01T12:00:00Z'));
  t.is(a.answer(doc, 'json', { 'if-modified-since': 'Sat, 01 Mar 2025 12:00:00 GMT' }).status, 304);
  t.is(a.answer(doc, 'json', { 'if-modified-since': 'Sat, 01 Mar 2025 11:59:59 GMT' }).status, 200);
  t.is(a.answer(doc, 'json', { 'if-modified-since': 'not a date' }).status, 200);
});

test('a changed document has a new ETag and Last-Modified: the old ETag no longer matches', (t) => {
  let now = new Date('2025-03-01T12:00:00Z');
  const a = new OpenApiV2Answers(() => now);
  const first = a.answer(doc, 'protobuf', {});
  now = new Date('2025-03-01T12:05:00Z');
  t.is(a.answer(doc, 'protobuf', { 'if-none-match': first.headers.ETag }).status, 304, 'the same document keeps its tag');
  const changed = a.answer(other, 'protobuf', { 'if-none-match': first.headers.ETag });
  t.is(changed.status, 200);
  t.not(changed.headers.ETag, first.headers.ETag);
  t.is(changed.headers['Last-Modified'], 'Sat, 01 Mar 2025 12:05:00 GMT');
  t.deepEqual(changed.body, openApiV2Protobuf(other));
});

test('gzip when Accept-Encoding allows it (as Go clients send), with Vary: Accept-Encoding; q=0 refuses it', (t) => {
  const a = new OpenApiV2Answers(at('2025-03-01T12:00:00Z'));
  for (const as of ['json', 'protobuf'] as const) {
    const plain = a.answer(doc, as, {});
    for (const ae of ['gzip', 'deflate, gzip;q=0.5', '*']) {
      const z = a.answer(doc, as, { 'accept-encoding': ae });
      t.like(z.headers, { 'Content-Encoding': 'gzip', Vary: 'Accept, Accept-Encoding', ETag: plain.headers.ETag });
      t.is(z.headers['Content-Length'], String(z.body!.length));
      t.deepEqual(gunzipSync(z.body!), plain.body, `${as} ${ae}`);
      t.true(z.body!.length * 4 < plain.body!.length, 'a document compresses well');
    }
    for (const ae of ['gzip;q=0', 'identity', 'gzip;q=0, *']) t.false('Content-Encoding' in a.answer(doc, as, { 'accept-encoding': ae }).headers, ae);
  }
});
