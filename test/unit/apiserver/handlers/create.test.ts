import test from 'ava';
import { handleCreate } from '../../../../apiserver/handlers/create';
import { withStore } from '../store/fixture';
import { call } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Record<string, string> = { k: 'v' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

test('POST answers 201 with the stored object', (t) =>
  withStore(async (f) => {
    const res = await call(f, handleCreate, 'POST', CMS, { body: cm('a') });
    t.is(res.statusCode, 201);
    t.is(res.headers['content-type'], 'application/json');
    t.like(res.body, { kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
    t.deepEqual(await f.store.get(f.type('configmaps'), 'default', 'a'), res.body);
  }));

test('POST without name or generateName is 422 with the cause; an existing name is 409 AlreadyExists', (t) =>
  withStore(async (f) => {
    const none = await call(f, handleCreate, 'POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } });
    t.is(none.statusCode, 422);
    t.like(none.body, { kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    t.deepEqual(none.body.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    await call(f, handleCreate, 'POST', CMS, { body: cm('a') });
    const dup = await call(f, handleCreate, 'POST', CMS, { body: cm('a', { k: 'other' }) });
    t.is(dup.statusCode, 409);
    t.deepEqual(dup.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "a" already exists',
      reason: 'AlreadyExists',
      code: 409,
      details: { name: 'a', kind: 'configmaps' },
    });
    t.deepEqual((await f.store.get(f.type('configmaps'), 'default', 'a')).data, { k: 'v' });
  }));

test('dryRun=All answers 201 and stores nothing; any other dryRun value is 400', (t) =>
  withStore(async (f) => {
    const dry = await call(f, handleCreate, 'POST', `${CMS}?dryRun=All`, { body: cm('a') });
    t.is(dry.statusCode, 201);
    t.is(dry.body.metadata.name, 'a');
    const listed = await f.store.list(f.type('configmaps'), 'default', { labelSelector: [], fieldSelector: [] });
    t.is(listed.items.length, 0);
    const bad = await call(f, handleCreate, 'POST', `${CMS}?dryRun=Some`, { body: cm('b') });
    t.is(bad.statusCode, 400);
    t.is(bad.body.message, 'dryRun: Unsupported value: "Some": supported values: "All"');
  }));

test('a YAML body is accepted and answered in YAML when asked; an unknown media type is 415', (t) =>
  withStore(async (f) => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n';
    const res = await call(f, handleCreate, 'POST', CMS, { raw: yaml, headers: { 'content-type': 'application/yaml', accept: 'application/yaml' } });
    t.is(res.statusCode, 201);
    t.is(res.headers['content-type'], 'application/yaml');
    t.regex(res.text, /^apiVersion: v1\n/m);
    t.regex(res.text, /name: y/);
    const xml = await call(f, handleCreate, 'POST', CMS, { raw: '<x/>', headers: { 'content-type': 'application/xml' } });
    t.is(xml.statusCode, 415);
    t.is(xml.body.reason, 'UnsupportedMediaType');
  }));

test('fieldValidation=Strict refuses unknown fields; Warn stores and warns', (t) =>
  withStore(async (f) => {
    const body = { ...cm('a'), bogus: 1 };
    const strict = await call(f, handleCreate, 'POST', `${CMS}?fieldValidation=Strict`, { body });
    t.is(strict.statusCode, 400);
    t.regex(strict.body.message, /unknown field "bogus"/);
    const warn = await call(f, handleCreate, 'POST', `${CMS}?fieldValidation=Warn`, { body });
    t.is(warn.statusCode, 201);
    t.is(String(warn.headers.warning), '299 - "unknown field \\"bogus\\""');
    t.is(warn.body.bogus, undefined);
  }));

test('integer fields refuse what their Go type cannot hold, or we cannot store exactly, with 422 naming the field', (t) =>
  withStore(async (f) => {
    const pod = (container: string) => `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"${container}}]}}`;
    const cases: Array<[string, string, RegExp]> = [
      [pod(',"ports":[{"containerPort":2147483648}]'), 'spec.containers[0].ports[0].containerPort', /must be an int32/],
      // Not exactly representable: JSON.parse would round it to 9007199254740992 and we would store that.
      [`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"terminationGracePeriodSeconds":9007199254740993,"containers":[{"name":"c","image":"i"}]}}`, 'spec.terminationGracePeriodSeconds', /cannot be stored exactly/],
      [`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"activeDeadlineSeconds":1e20,"containers":[{"name":"c","image":"i"}]}}`, 'spec.activeDeadlineSeconds', /cannot be stored exactly/],
      [`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"priority":1.5,"containers":[{"name":"c","image":"i"}]}}`, 'spec.priority', /must be of type integer/],
    ];
    for (const [raw, field, message] of cases) {
      const res = await call(f, handleCreate, 'POST', '/api/v1/namespaces/default/pods', { raw, headers: { 'content-type': 'application/json' } });
      t.is(res.statusCode, 422, field);
      const cause = (res.body.details.causes as Array<{ field: string; message: string }>).find((c) => c.field === field);
      t.truthy(cause, `${field} among ${JSON.stringify(res.body.details.causes)}`);
      t.regex(cause?.message ?? '', message);
    }
    // The largest exactly representable value is accepted and stored as sent.
    const ok = await call(f, handleCreate, 'POST', '/api/v1/namespaces/default/pods', {
      raw: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"terminationGracePeriodSeconds":9007199254740991,"containers":[{"name":"c","image":"i"}]}}`,
      headers: { 'content-type': 'application/json' },
    });
    t.is(ok.statusCode, 201, ok.text);
    t.is(ok.body.spec.terminationGracePeriodSeconds, 9007199254740991);
  }));
