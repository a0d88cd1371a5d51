/**
 * Server-side apply over the PATCH handler (issue 18; spec 4.3, 4.4, 7, Appendix C): YAML and
 * JSON bodies, create on apply (201, the create permission), fieldManager required, managedFields
 * refused, conflicts and force as Status bodies, dryRun, fieldValidation on the applied YAML,
 * the status sub-resource.
 */
import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { handlePatch } from '../../../../apiserver/handlers/patch';
import { admin, configMap, withStore } from '../store/fixture';
import { call } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
/** The router's authorizer for the create an apply may do: allowed. */
const allow = async () => {};
const cmYaml = (value: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: ${value}\n${extra}`;

test('apply creates (201) and then patches (200) the object; a JSON body is YAML too', (t) =>
  withStore(async (f) => {
    const created = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow });
    t.is(created.statusCode, 201, created.text);
    t.like(created.body, { kind: 'ConfigMap', data: { key: 'one' } });
    t.like(created.body.metadata.managedFields[0], { manager: 'tool', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:key': {} } } });
    const json = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { key: 'two' } });
    const patched = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: json, headers: APPLY, authorizeVerb: allow });
    t.is(patched.statusCode, 200);
    t.is(patched.body.data.key, 'two');
  }));

test('create on apply needs the create permission; applying to an existing object does not ask for it', (t) =>
  withStore(async (f) => {
    const asked: string[] = [];
    const denyCreate = (verb: string) => {
      asked.push(verb);
      return verb === 'create' ? Promise.reject(new ApiError('Forbidden', 'configmaps "cm" is forbidden: User "dev" cannot create resource "configmaps"')) : Promise.resolve();
    };
    const refused = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: denyCreate });
    t.is(refused.statusCode, 403);
    t.is((await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: async () => {} })).statusCode, 201);
    asked.length = 0;
    const existing = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('two'), headers: APPLY, authorizeVerb: denyCreate });
    t.is(existing.statusCode, 200);
    t.deepEqual(asked, []);
  }));

test('apply without fieldManager is upstream’s 422; managedFields in the body, another kind, another name are 400', (t) =>
  withStore(async (f) => {
    const none = await call(f, handlePatch, 'PATCH', `${CMS}/cm`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow });
    t.is(none.statusCode, 422);
    t.like(none.body, { reason: 'Invalid', message: 'PatchOptions.meta.svc.io "" is invalid: fieldManager: Required value: is required for apply patch' });
    t.deepEqual(none.body.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }]);
    const mf = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: `${cmYaml('one')}`.replace('  name: cm\n', '  name: cm\n  managedFields: []\n'), headers: APPLY, authorizeVerb: allow });
    t.is(mf.statusCode, 400);
    t.is(mf.body.message, 'metadata.managedFields must be nil');
    const kind = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('one').replace('ConfigMap', 'Secret'), headers: APPLY, authorizeVerb: allow });
    t.is(kind.statusCode, 400);
    t.is(kind.body.message, 'invalid object type: /v1, Kind=Secret');
    const name = await call(f, handlePatch, 'PATCH', `${CMS}/other?fieldManager=tool`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow });
    t.is(name.statusCode, 400);
    t.is(name.body.message, 'the name of the object (cm) does not match the name on the URL (other)');
    const force = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool&force=maybe`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow });
    t.is(force.statusCode, 400);
  }));

test('a conflict is a 409 Status with one cause per field; force=true takes the field', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', { ...configMap('cm'), data: { key: 'set-by-create' } }, { ...admin, fieldManager: 'creator' });
    const conflict = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: cmYaml('mine'), headers: APPLY, authorizeVerb: allow });
    t.is(conflict.statusCode, 409);
    t.deepEqual(conflict.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "creator" using v1: .data.key',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "creator" using v1', field: '.data.key' }] },
      code: 409,
    });
    const forced = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool&force=true`, { raw: cmYaml('mine'), headers: APPLY, authorizeVerb: allow });
    t.is(forced.statusCode, 200);
    t.is(forced.body.data.key, 'mine');
  }));

test('dryRun=All answers what would be created and stores nothing', (t) =>
  withStore(async (f) => {
    const dry = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool&dryRun=All`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow });
    t.is(dry.statusCode, 201);
    t.is(dry.body.data.key, 'one');
    t.is((await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool&dryRun=All`, { raw: cmYaml('one'), headers: APPLY, authorizeVerb: allow })).statusCode, 201);
    await t.throwsAsync(f.store.get(f.type('configmaps'), 'default', 'cm'), { message: /not found/ });
  }));

test('fieldValidation on the applied YAML: Strict lists unknown and duplicate fields (400); Warn warns and drops the unknown one', (t) =>
  withStore(async (f) => {
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  name: cm\ndata:\n  key: v\nspec:\n  bogus: 1\n`;
    const strict = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool&fieldValidation=Strict`, { raw: body, headers: APPLY, authorizeVerb: allow });
    t.is(strict.statusCode, 400);
    t.is(strict.body.message, 'strict decoding error: unknown field "spec", duplicate field "metadata.name"');
    const warn = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=tool`, { raw: body, headers: APPLY, authorizeVerb: allow });
    t.is(warn.statusCode, 201);
    t.is(warn.body.spec, undefined);
    t.regex(String(warn.headers.warning), /unknown field \\"spec\\"/);
    t.regex(String(warn.headers.warning), /duplicate field \\"metadata.name\\"/);
  }));

test('apply to /status writes status only, under its own entry; the object must exist (404)', (t) =>
  withStore(async (f) => {
    const PODS = '/api/v1/namespaces/default/pods';
    const status = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nstatus:\n  phase: Running\n';
    t.is((await call(f, handlePatch, 'PATCH', `${PODS}/p/status?fieldManager=kubelet`, { raw: status, headers: APPLY, authorizeVerb: allow })).statusCode, 404);
    await call(f, handlePatch, 'PATCH', `${PODS}/p?fieldManager=tool`, { raw: 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: i\n', headers: APPLY, authorizeVerb: allow });
    const res = await call(f, handlePatch, 'PATCH', `${PODS}/p/status?fieldManager=kubelet`, { raw: status, headers: APPLY, authorizeVerb: allow });
    t.is(res.statusCode, 200, res.text);
    t.is(res.body.status.phase, 'Running');
    t.like(res.body.metadata.managedFields.find((e: any) => e.manager === 'kubelet'), { manager: 'kubelet', operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:phase': {} } } });
  }));

test('an applied object past the body limit is a 413, as a patched one (live and configuration may each be near it)', (t) =>
  withStore(async (f) => {
    const cm = (data: Record<string, string>) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data });
    // A ConfigMap holds at most 1 MiB of data (validation); the merge is refused before validation sees it.
    const first = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=one`, { raw: cm({ a: 'x'.repeat(900 * 1024) }), headers: APPLY, authorizeVerb: allow });
    t.is(first.statusCode, 201);
    const second = await call(f, handlePatch, 'PATCH', `${CMS}/cm?fieldManager=two`, { raw: cm({ b: 'y'.repeat(2500 * 1024) }), headers: APPLY, authorizeVerb: allow });
    t.is(second.statusCode, 413);
    t.is(second.body.message, `the applied object is larger than the limit of ${3 * 1024 * 1024} bytes`);
  }));
