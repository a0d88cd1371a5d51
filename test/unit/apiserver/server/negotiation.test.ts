import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { bodyFormat, negotiate, prefersProtobuf } from '../../../../apiserver/server/negotiation';

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
