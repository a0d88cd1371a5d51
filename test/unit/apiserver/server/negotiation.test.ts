import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { binaryReply, bodyFormat, negotiate, prefersProtobuf } from '../../../../apiserver/server/negotiation';

test('Accept fallback lists pick the first servable type', (t) => {
  t.deepEqual(negotiate(undefined, { tableAllowed: true }), { kind: 'json' });
  t.deepEqual(negotiate('application/vnd.svc.protobuf,application/json', { tableAllowed: true }), { kind: 'json' });
  t.deepEqual(negotiate('application/yaml', { tableAllowed: true }), { kind: 'yaml' });
  const kubectl = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  t.like(negotiate(kubectl, { tableAllowed: true }), { kind: 'table', group: 'meta.k8s.io', version: 'v1' });
  t.like(negotiate('application/json;as=Table;g=meta.svc.io;v=v1', { tableAllowed: true }), { kind: 'table', group: 'meta.svc.io' });
  t.deepEqual(negotiate('application/json;as=Table;g=meta.svc.io;v=v1, application/json', { tableAllowed: false }), { kind: 'json' });
  t.deepEqual(negotiate('*/*', { tableAllowed: true }), { kind: 'json' });
});

test('nothing servable is a 406', (t) => {
  const e = t.throws(() => negotiate('application/vnd.svc.protobuf', { tableAllowed: true }), { instanceOf: ApiError });
  t.is(e?.code, 406);
  t.is(t.throws(() => negotiate('application/cbor', { tableAllowed: true }), { instanceOf: ApiError })?.code, 406);
});

test('body types and 415', (t) => {
  t.is(bodyFormat('application/json', 'POST'), 'json');
  t.is(bodyFormat('application/yaml', 'PUT'), 'yaml');
  t.is(bodyFormat('application/strategic-merge-patch+json', 'PATCH'), 'strategic-merge-patch');
  t.is(t.throws(() => bodyFormat('application/json', 'PATCH'), { instanceOf: ApiError })?.code, 415);
  t.is(t.throws(() => bodyFormat('application/cbor', 'POST'), { instanceOf: ApiError })?.code, 415);
});

test('Kubernetes protobuf where the response has a protobuf form, in client order', (t) => {
  const pb = 'application/vnd.kubernetes.protobuf';
  t.deepEqual(negotiate(`${pb}, application/json`, { tableAllowed: true, protobuf: true }), { kind: 'protobuf' });
  t.deepEqual(negotiate(`${pb};stream=watch`, { tableAllowed: true, protobuf: true }), { kind: 'protobuf' });
  t.deepEqual(negotiate(`application/json, ${pb}`, { tableAllowed: true, protobuf: true }), { kind: 'json' });
  t.deepEqual(negotiate(`${pb};q=0.5, application/json`, { tableAllowed: true, protobuf: true }), { kind: 'json' });
  t.deepEqual(negotiate(`${pb}, application/json`, { tableAllowed: true }), { kind: 'json' }, 'not offered: the next type');
  // A Table is JSON only (kubectl asks for it as JSON); protobuf Table falls through.
  t.deepEqual(negotiate(`${pb};as=Table;v=v1;g=meta.k8s.io, application/json`, { tableAllowed: true, protobuf: true }), { kind: 'json' });
  const e = t.throws(() => negotiate(`${pb};as=Table;v=v1;g=meta.k8s.io`, { tableAllowed: true, protobuf: true }), { instanceOf: ApiError });
  t.is(e?.code, 406);
  t.regex(e.message, /application\/vnd\.kubernetes\.protobuf/);
  t.true(prefersProtobuf(`${pb}, application/json`));
  t.false(prefersProtobuf('application/json'));
  t.false(prefersProtobuf(undefined));
});

test('protobuf bodies only where the caller decodes them; never for patches', (t) => {
  const pb = 'application/vnd.kubernetes.protobuf';
  t.is(bodyFormat(pb, 'POST', { protobuf: true }), 'protobuf');
  t.is(bodyFormat(pb, 'PUT', { protobuf: true }), 'protobuf');
  t.is(t.throws(() => bodyFormat(pb, 'POST'), { instanceOf: ApiError })?.code, 415);
  t.is(t.throws(() => bodyFormat(pb, 'PATCH', { protobuf: true }), { instanceOf: ApiError })?.code, 415);
});

test('CBOR with the CBORServingAndStorage gate: in client order, JSON fallback, cbor-seq for watches, never a Table', (t) => {
  const on = { tableAllowed: true, protobuf: true, cbor: true };
  t.deepEqual(negotiate('application/cbor', on), { kind: 'cbor' });
  // client-go's CBOR clients ask so.
  t.deepEqual(negotiate('application/json;q=0.9,application/cbor;q=1', on), { kind: 'cbor' });
  t.deepEqual(negotiate('application/json, application/cbor', on), { kind: 'json' });
  t.deepEqual(negotiate('application/cbor, application/vnd.kubernetes.protobuf', on), { kind: 'cbor' });
  t.deepEqual(negotiate('application/vnd.kubernetes.protobuf, application/cbor', on), { kind: 'protobuf' });
  t.deepEqual(negotiate('application/cbor;as=Table;v=v1;g=meta.k8s.io, application/json', on), { kind: 'json' });
  // application/cbor-seq names a watch's stream (spec 4.5); a single item is application/cbor.
  t.deepEqual(negotiate('application/cbor-seq', { ...on, watch: true }), { kind: 'cbor' });
  t.deepEqual(negotiate('application/cbor', { ...on, watch: true }), { kind: 'cbor' });
  const single = t.throws(() => negotiate('application/cbor-seq', on), { instanceOf: ApiError });
  t.is(single?.code, 406);
  t.regex(single?.message ?? '', /application\/cbor,/);
  t.regex(t.throws(() => negotiate('text/plain', { ...on, watch: true }), { instanceOf: ApiError })?.message ?? '', /application\/cbor-seq/);
  // Writes and errors: the first binary form in the client's order.
  t.is(binaryReply('application/cbor, application/json', { cbor: true }), 'cbor');
  t.is(binaryReply('application/vnd.kubernetes.protobuf, application/cbor', { cbor: true }), 'protobuf');
  t.is(binaryReply('application/json, application/cbor', { cbor: true }), undefined);
  t.is(binaryReply('application/cbor'), undefined);
});

test('CBOR without the gate (the default): not offered, 406 alone, 415 as a body, apply-patch+cbor unknown', (t) => {
  const off = { tableAllowed: true, protobuf: true };
  t.deepEqual(negotiate('application/cbor, application/json', off), { kind: 'json' });
  const e = t.throws(() => negotiate('application/cbor', off), { instanceOf: ApiError });
  t.is(e?.code, 406);
  t.notRegex(e?.message ?? '', /cbor/);
  t.is(t.throws(() => negotiate('application/cbor-seq', { ...off, watch: true }), { instanceOf: ApiError })?.code, 406);
  for (const method of ['POST', 'PUT']) {
    const body = t.throws(() => bodyFormat('application/cbor', method, { protobuf: true }), { instanceOf: ApiError });
    t.is(body?.code, 415);
    t.notRegex(body?.message ?? '', /cbor/);
  }
  const apply = t.throws(() => bodyFormat('application/apply-patch+cbor', 'PATCH'), { instanceOf: ApiError });
  t.is(apply?.code, 415);
  t.notRegex(apply?.message ?? '', /cbor/);
});

test('CBOR bodies with the gate: whole objects and apply-patch+cbor; no CBOR json, merge or strategic patches', (t) => {
  t.is(bodyFormat('application/cbor', 'POST', { cbor: true }), 'cbor');
  t.is(bodyFormat('application/cbor', 'PUT', { protobuf: true, cbor: true }), 'cbor');
  t.is(bodyFormat('application/apply-patch+cbor', 'PATCH', { cbor: true }), 'apply-patch-cbor');
  const patch = t.throws(() => bodyFormat('application/cbor', 'PATCH', { cbor: true }), { instanceOf: ApiError });
  t.is(patch?.code, 415);
  t.regex(patch?.message ?? '', /application\/apply-patch\+cbor/);
  t.regex(t.throws(() => bodyFormat('text/plain', 'POST', { cbor: true }), { instanceOf: ApiError })?.message ?? '', /application\/cbor$/);
});

test('a header parsed once answers every later request alike, whatever each one offers; many distinct headers still parse', (t) => {
  const accept = 'application/vnd.kubernetes.protobuf;q=0.9, application/json;q=0.5, application/yaml';
  for (let i = 0; i < 3; i++) {
    t.is(negotiate(accept, { tableAllowed: false, protobuf: true }).kind, 'yaml');
    t.is(negotiate(accept.replace('application/yaml', 'application/yaml;q=0.1'), { tableAllowed: false, protobuf: true }).kind, 'protobuf');
    t.is(negotiate(accept.replace('application/yaml', 'application/yaml;q=0.1'), { tableAllowed: false, protobuf: false }).kind, 'json');
  }
  for (let i = 0; i < 600; i++) {
    const h = `application/x-${i};q=0.${(i % 9) + 1}, application/json;q=0.05`;
    t.is(negotiate(h, { tableAllowed: false }).kind, 'json');
  }
  t.throws(() => negotiate('application/x-1', { tableAllowed: false }), { message: /only the following media types/ });
});
