import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { customResourceTypes } from '../../../../../apiserver/registry/crd/custom-type';
import type { ResourceType } from '../../../../../apiserver/registry/resource-type';
import { checkObject } from '../../../../../apiserver/server/decode';
import { adminCtx, openFixture, type Fixture } from '../../controllers/store-fixture';
import { crd, specSchema } from './crd-fixtures';

// Custom objects validated against their CRD's structural schema (upstream's messages), pruned of
// unknown fields and defaulted, through the real store.

let f: Fixture;
test.before(async () => {
  f = await openFixture();
});
test.after.always(() => f?.close());

const spec = specSchema(
  {
    replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'slow' },
    name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    ratio: { type: 'number', exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
    small: { type: 'integer', format: 'int32' },
    port: { 'x-kubernetes-int-or-string': true },
    maybe: { type: 'string', nullable: true },
    notNull: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2, 'x-kubernetes-list-type': 'set' },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } } },
    },
    labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 3 }, maxProperties: 2 },
    raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    partly: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'integer' } } },
    template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
    choice: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] },
  },
  { required: ['name'] },
);
const types = customResourceTypes(crd({ schema: spec }));
const widget: ResourceType = types[0].type;

/** A Widget whose spec has name 'abc' and s (a key given undefined is left out, as JSON would). */
function obj(s: Record<string, unknown>, name = 'w'): KObject {
  const spec = JSON.parse(JSON.stringify({ name: 'abc', ...s })) as Record<string, unknown>;
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec };
}

async function refused(s: Record<string, unknown>): Promise<string> {
  const err = await f.store.create(widget, 'default', obj(s), { ...adminCtx, dryRun: true }).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!err) throw new Error('the object was accepted');
  return err.message;
}

const accepted = (s: Record<string, unknown>) => f.store.create(widget, 'default', obj(s), { ...adminCtx, dryRun: true });

test('types, with upstream wording', async (t) => {
  t.regex(await refused({ replicas: 'string' }), /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/);
  t.regex(await refused({ tags: 'a' }), /spec\.tags: Invalid value: "string": spec\.tags in body must be of type array: "string"/);
  t.regex(await refused({ port: true }), /spec\.port: Invalid value: "boolean": spec\.port in body must be of type integer or string: "boolean"/);
  await t.notThrowsAsync(accepted({ port: 8080 }));
  await t.notThrowsAsync(accepted({ port: 'http' }));
});

test('required, enum, bounds, lengths, pattern, multipleOf', async (t) => {
  t.regex(await refused({ name: undefined }), /spec\.name: Required value/);
  t.regex(await refused({ mode: 'medium' }), /spec\.mode: Unsupported value: "medium": supported values: "fast", "slow"/);
  t.regex(await refused({ replicas: -1 }), /spec\.replicas: Invalid value: -1: spec\.replicas in body should be greater than or equal to 0/);
  t.regex(await refused({ replicas: 11 }), /spec\.replicas: Invalid value: 11: spec\.replicas in body should be less than or equal to 10/);
  t.regex(await refused({ ratio: 1 }), /spec\.ratio: Invalid value: 1: spec\.ratio in body should be less than 1/);
  t.regex(await refused({ ratio: 0.3 }), /spec\.ratio: Invalid value: 0\.3: spec\.ratio in body should be a multiple of 0\.25/);
  t.regex(await refused({ name: 'a' }), /spec\.name: Invalid value: "a": spec\.name in body should be at least 2 chars long/);
  t.regex(await refused({ name: 'abcdef' }), /spec\.name: Invalid value: "abcdef": spec\.name in body should be at most 5 chars long/);
  t.regex(await refused({ name: 'ab1' }), /spec\.name: Invalid value: "ab1": spec\.name in body should match '\^\[a-z\]\+\$'/);
});

test('formats: date-time, date, int32', async (t) => {
  t.regex(await refused({ when: 'yesterday' }), /spec\.when: Invalid value: "yesterday": spec\.when in body must be of type date-time: "yesterday"/);
  await t.notThrowsAsync(accepted({ when: '2024-02-29T10:00:00Z' }));
  t.regex(await refused({ day: '2023-02-29' }), /spec\.day in body must be of type date: "2023-02-29"/);
  t.regex(await refused({ small: 2 ** 31 }), /spec\.small in body must be of type int32/);
});

test('nullable: null is refused unless the schema allows it', async (t) => {
  t.regex(await refused({ notNull: null }), /spec\.notNull: Invalid value: "null": spec\.notNull in body must be of type string: "null"/);
  const ok = await accepted({ maybe: null });
  t.is((ok.spec as Record<string, unknown>).maybe, null);
});

test('lists: maxItems, set uniqueness, map keys unique; maps: values and maxProperties', async (t) => {
  t.regex(await refused({ tags: ['a', 'b', 'c'] }), /spec\.tags: Too many: 3: must have at most 2 items/);
  t.regex(await refused({ tags: ['a', 'a'] }), /spec\.tags\[1\]: Duplicate value: "a"/);
  t.regex(await refused({ ports: [{ name: 'x' }, { name: 'x' }] }), /spec\.ports\[1\]\.name: Duplicate value: "x"/);
  t.regex(await refused({ labels: { a: 'long' } }), /spec\.labels\[a\]: Invalid value: "long": spec\.labels\[a\] in body should be at most 3 chars long/);
  t.regex(await refused({ labels: { a: '1', b: '2', c: '3' } }), /spec\.labels: Too many: 3: must have at most 2 items/);
});

test('oneOf and embedded resources', async (t) => {
  t.regex(await refused({ choice: { a: 'x', b: 'y' } }), /spec\.choice: Invalid value: .*must validate one and only one schema \(oneOf\)/);
  await t.notThrowsAsync(accepted({ choice: { a: 'x' } }));
  t.regex(await refused({ template: { spec: {} } }), /spec\.template\.apiVersion: Required value: must not be empty/);
  t.regex(await refused({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' } } }), /spec\.template\.metadata\.name: Invalid value: "Bad_Name"/);
  await t.notThrowsAsync(accepted({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' } }, spec: { anything: 1 } } }));
});

test('defaults are filled on write, nested ones too, and absent fields only', async (t) => {
  const out = await accepted({ mode: 'fast', ports: [{ name: 'http' }, { name: 'x', port: 8 }] });
  const s = out.spec as Record<string, any>;
  t.is(s.replicas, 1);
  t.is(s.mode, 'fast');
  t.deepEqual(s.ports, [{ name: 'http', port: 80 }, { name: 'x', port: 8 }]);
});

test('unknown fields are pruned (Ignore/Warn) or refused (Strict), except under preserve-unknown-fields', (t) => {
  const body = obj({ bogus: 1, raw: { any: { thing: [1] } }, partly: { known: 1, extra: 'kept' }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: { x: 1 } } });
  (body as Record<string, unknown>).topLevel = true;
  const { object, warnings } = checkObject(structuredClone(body), [], widget, 'Warn');
  t.deepEqual(warnings.sort(), ['unknown field "spec.bogus"', 'unknown field "spec.template.metadata.junk"', 'unknown field "topLevel"']);
  const s = object.spec as Record<string, any>;
  t.false('bogus' in s);
  t.deepEqual(s.raw, { any: { thing: [1] } });
  t.deepEqual(s.partly, { known: 1, extra: 'kept' });
  t.deepEqual(s.template.metadata, { name: 'p' });
  t.throws(() => checkObject(structuredClone(body), [], widget, 'Strict'), { message: /unknown field "spec\.bogus"/ });
});

test('reads prune fields a narrowed schema no longer has and fill new defaults', async (t) => {
  // Stored under the first schema, read through one that drops `old` and adds a default.
  const before = customResourceTypes(crd({ plural: 'gizmos', kind: 'Gizmo', schema: specSchema({ old: { type: 'string' }, keep: { type: 'string' } }) }))[0].type;
  await f.store.create(before, 'default', { apiVersion: 'example.com/v1', kind: 'Gizmo', metadata: { name: 'g', namespace: 'default' }, spec: { old: 'x', keep: 'y' } }, adminCtx);
  const after = customResourceTypes(crd({ plural: 'gizmos', kind: 'Gizmo', schema: specSchema({ keep: { type: 'string' }, added: { type: 'string', default: 'd' } }) }))[0].type;
  const read = await f.store.get(after, 'default', 'g');
  t.deepEqual(read.spec, { keep: 'y', added: 'd' });
  // And it stays writable: an update through the new schema succeeds.
  const { object } = await f.store.update(after, 'default', 'g', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), keep: 'z' } }), adminCtx);
  t.deepEqual(object.spec, { keep: 'z', added: 'd' });
});
