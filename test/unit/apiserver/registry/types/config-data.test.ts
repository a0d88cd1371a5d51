import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeConfigMapType } from '../../../../../apiserver/registry/types/configmaps';
import { makeSecretType, SECRET_TYPES, SERVICE_ACCOUNT_NAME_ANNOTATION } from '../../../../../apiserver/registry/types/secrets';
import { makeServiceAccountType } from '../../../../../apiserver/registry/types/serviceaccounts';
import { validateAgainstSchema } from '../../../../../apiserver/validation/validate-schema';
import { ago, cells, fields, now } from './fixtures';

const cmType = makeConfigMapType(now);
const secretType = makeSecretType(now);
const saType = makeServiceAccountType(now);
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('configmap: valid keys pass; bad keys, overlaps and bad base64 fail', (t) => {
  const ok: KObject = { metadata: { name: 'c', namespace: 'd' }, data: { 'app.conf': 'x', KEY_1: 'y' }, binaryData: { 'blob.bin': b64('\x00\x01') } };
  t.deepEqual(cmType.validate!(ok), []);
  const bad: KObject = { metadata: { name: 'c', namespace: 'd' }, data: { 'a/b': 'x', both: 'y', '..x': 'z' }, binaryData: { both: b64('z'), raw: 'not base64!' } };
  const causes = cmType.validate!(bad);
  t.deepEqual(fields(causes), ['data[a/b]', 'data[both]', 'data[..x]', 'binaryData[raw]']);
  t.is(causes[0].message, "Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  t.is(causes[1].message, 'Invalid value: "both": duplicate of key present in binaryData');
  t.is(causes[2].message, 'Invalid value: "..x": must not start with \'..\'');
});

test('configmap: total data limited to 1 MiB', (t) => {
  const big: KObject = { metadata: { name: 'c' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } };
  t.deepEqual(cmType.validate!(big).map((c) => c.message), ['Too long: may not be more than 1048576 bytes']);
});

test('configmap: immutable ones keep their data', (t) => {
  const old: KObject = { metadata: { name: 'c' }, immutable: true, data: { a: '1' } };
  t.deepEqual(cmType.validateUpdate!({ ...old }, old), []);
  const causes = cmType.validateUpdate!({ metadata: { name: 'c' }, data: { a: '2' } }, old);
  t.deepEqual(causes.map((c) => [c.field, c.message]), [
    ['immutable', 'Forbidden: field is immutable when `immutable` is set'],
    ['data', 'Forbidden: field is immutable when `immutable` is set'],
  ]);
});

test('configmap table counts data and binaryData', (t) => {
  const o: KObject = { metadata: { name: 'c', creationTimestamp: ago(3 * 3600_000) }, data: { a: '1' }, binaryData: { b: 'AA==' } };
  t.deepEqual(cells(cmType, o), { Data: 2, Age: '3h' });
  t.deepEqual(cmType.shortNames, ['cm']);
});

test('secret defaults: type Opaque, stringData merged into data and dropped', (t) => {
  const o: KObject = { metadata: { name: 's', namespace: 'd' }, data: { a: b64('old'), b: b64('keep') }, stringData: { a: 'new', c: 'plain' } };
  secretType.defaults!(o);
  t.is(o.type, 'Opaque');
  t.deepEqual(o.data, { a: b64('new'), b: b64('keep'), c: b64('plain') });
  t.false('stringData' in o);
  const again = structuredClone(o);
  secretType.defaults!(again);
  t.deepEqual(again, o);
  t.deepEqual(secretType.validate!(o), []);
});

test('secret stringData values that are not strings are refused by the schema, not dropped', (t) => {
  const o: KObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'd' }, stringData: { 'token-id': 123456, 'token-secret': 'abc' } };
  secretType.defaults!(o);
  t.deepEqual(o.stringData, { 'token-id': 123456, 'token-secret': 'abc' }, 'nothing folded, nothing lost');
  t.is(o.data, undefined);
  const causes = validateAgainstSchema(o, secretType.schema);
  t.deepEqual(
    causes.map((c) => c.field),
    ['stringData[token-id]'],
  );
});

test('secret validation: base64 values, keys and per-type required keys', (t) => {
  const bad: KObject = { metadata: { name: 's' }, type: 'Opaque', data: { 'bad key': b64('x'), v: 'zz!' } };
  t.deepEqual(fields(secretType.validate!(bad)), ['data[bad key]', 'data[v]']);
  const tls: KObject = { metadata: { name: 's' }, type: SECRET_TYPES.tls, data: { 'tls.crt': b64('c') } };
  t.deepEqual(secretType.validate!(tls).map((c) => [c.field, c.message]), [['data[tls.key]', 'Required value']]);
  const sa: KObject = { metadata: { name: 's' }, type: SECRET_TYPES.serviceAccountToken };
  t.deepEqual(fields(secretType.validate!(sa)), [`metadata.annotations[${SERVICE_ACCOUNT_NAME_ANNOTATION}]`]);
  const docker: KObject = { metadata: { name: 's' }, type: SECRET_TYPES.dockerConfigJson, data: { '.dockerconfigjson': b64('{nope') } };
  t.deepEqual(fields(secretType.validate!(docker)), ['data[.dockerconfigjson]']);
  const basic: KObject = { metadata: { name: 's' }, type: SECRET_TYPES.basicAuth, data: {} };
  t.deepEqual(fields(secretType.validate!(basic)), ['data[username]', 'data[password]']);
});

test('secret update: type immutable, immutable data fixed', (t) => {
  const old: KObject = { metadata: { name: 's' }, type: 'Opaque', immutable: true, data: { a: b64('1') } };
  const next: KObject = { metadata: { name: 's' }, type: SECRET_TYPES.tls, immutable: true, data: { a: b64('2') } };
  t.deepEqual(secretType.validateUpdate!(next, old).map((c) => [c.field, c.message]), [
    ['type', 'Invalid value: "svc.io/tls": field is immutable'],
    ['data', 'Forbidden: field is immutable when `immutable` is set'],
  ]);
});

test('secret table and field selector', (t) => {
  const o: KObject = { metadata: { name: 's', creationTimestamp: ago(10_000) }, type: SECRET_TYPES.bootstrapToken, data: { a: 'AA==', b: 'AA==' } };
  t.deepEqual(cells(secretType, o), { Type: 'bootstrap.svc.io/token', Data: 2, Age: '10s' });
  t.is(secretType.fieldSelectors!.type(o), 'bootstrap.svc.io/token');
});

test('serviceaccount: table counts secrets; secrets keyed by name', (t) => {
  const o: KObject = { metadata: { name: 'default', creationTimestamp: ago(60_000) }, secrets: [{ name: 'tok' }] };
  t.deepEqual(cells(saType, o), { Secrets: 1, Age: '60s' });
  t.deepEqual((saType.schema.properties.secrets as any).mapKeys, ['name']);
  t.deepEqual(saType.shortNames, ['sa']);
});
