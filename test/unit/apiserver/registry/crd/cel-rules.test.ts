import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { customResourceTypes } from '../../../../../apiserver/registry/crd/custom-type';
import { adminCtx, openFixture, type Fixture } from '../../controllers/store-fixture';
import { crd, specSchema } from './crd-fixtures';

// x-kubernetes-validations: CEL rules of a CRD's schema on create and update, with upstream's causes.

let f: Fixture;
test.before(async () => {
  f = await openFixture();
});
test.after.always(() => f?.close());

const crds = () => f.type('apiextensions.svc.io', 'v1', 'customresourcedefinitions');

const schema = specSchema(
  {
    min: { type: 'integer' },
    max: { type: 'integer' },
    name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.startsWith("w-")', message: 'must start with w-' }] },
    immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'is immutable', reason: 'FieldValueForbidden' }] },
    items: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.size <= 10', messageExpression: '"size " + string(self.size) + " of " + self.name + " is above 10"' }] },
    },
    tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(t, t.size() < 4)', fieldPath: '.x', reason: 'FieldValueRequired' }] },
    big: { type: 'array', items: { type: 'string' } },
  },
  { 'x-kubernetes-validations': [{ rule: '!has(self.min) || !has(self.max) || self.min <= self.max', message: 'min must not exceed max' }, { rule: 'self.big.all(a, self.big.all(b, self.big.all(c, a + b + c != "")))' }] },
);
const widget = customResourceTypes(crd({ schema }))[0].type;

const obj = (spec: Record<string, unknown>, name = 'w'): KObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { big: [], ...spec } });

async function refused(spec: Record<string, unknown>): Promise<string> {
  const err = await f.store.create(widget, 'default', obj(spec), { ...adminCtx, dryRun: true }).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!err) throw new Error('the object was accepted');
  return err.message;
}

test('a false rule is a cause at its node with message, the default message or messageExpression', async (t) => {
  t.regex(await refused({ min: 5, max: 1 }), /spec: Invalid value: "object": min must not exceed max/);
  t.regex(await refused({ name: 'x' }), /spec\.name: Invalid value: "string": must start with w-/);
  t.regex(await refused({ items: [{ name: 'a', size: 11 }] }), /spec\.items\[0\]: Invalid value: "object": size 11 of a is above 10/);
  await t.notThrowsAsync(f.store.create(widget, 'default', obj({ min: 1, max: 5, name: 'w-1', items: [{ name: 'a', size: 3 }] }), { ...adminCtx, dryRun: true }));
});

test('reason and fieldPath shape the cause', async (t) => {
  t.regex(await refused({ tags: ['long-tag'] }), /spec\.tags\.x: Required value: failed rule: self\.all\(t, t\.size\(\) < 4\)/);
});

test('transition rules run on updates only, with oldSelf the value replaced', async (t) => {
  const created = await f.store.create(widget, 'default', obj({ immutable: 'a' }, 'tr'), adminCtx);
  t.is((created.spec as Record<string, unknown>).immutable, 'a');
  await t.throwsAsync(
    f.store.update(widget, 'default', 'tr', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), immutable: 'b' } }), adminCtx),
    { message: /spec\.immutable: Forbidden: is immutable/ },
  );
  await t.notThrowsAsync(f.store.update(widget, 'default', 'tr', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), min: 1 } }), adminCtx));
});

test('an expression over its per-call budget is refused, naming the rule', async (t) => {
  // 120^3 concatenations of growing strings: far over 1,000,000 cost units.
  const big = Array.from({ length: 120 }, (_, i) => `value-${i}-${'x'.repeat(40)}`);
  t.regex(await refused({ big }), /spec: Invalid value: "object": call cost exceeds limit for rule: self\.big\.all/);
});

test('rules that do not compile refuse the CRD', async (t) => {
  const bad = crd({ schema: specSchema({ a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.startsWith(' }] } }) });
  const err = await f.store.create(crds(), '', bad, { ...adminCtx, dryRun: true }).catch((e: Error) => e);
  t.regex((err as Error).message, /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[a\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.startsWith\(": compilation failed/);
  const unknownVar = crd({ schema: specSchema({ a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'other > 1' }] } }) });
  await t.throwsAsync(f.store.create(crds(), '', unknownVar, { ...adminCtx, dryRun: true }), { message: /x-kubernetes-validations\[0\]\.rule: Invalid value: "other > 1": compilation failed/ });
});

test('the rules of one object share a budget of 10,000,000: past it, no further rule runs', async (t) => {
  // Each rule costs about 900,000 (100 concatenations of 90,000 characters): under the per-call
  // limit, but twelve of them are over the object's budget.
  const rule = { rule: 'self.s.all(a, self.s.all(b, (a + b).size() > 0))' };
  const costly = customResourceTypes(crd({ plural: 'costlies', kind: 'Costly', schema: specSchema({ s: { type: 'array', items: { type: 'string' } } }, { 'x-kubernetes-validations': Array.from({ length: 12 }, () => rule) }) }))[0].type;
  const s = Array.from({ length: 10 }, (_, i) => `${'x'.repeat(45_000)}${i}`);
  const o: KObject = { apiVersion: 'example.com/v1', kind: 'Costly', metadata: { name: 'c', namespace: 'default' }, spec: { s } };
  const err = await f.store.create(costly, 'default', o, { ...adminCtx, dryRun: true }).catch((e: Error) => e);
  t.regex((err as Error).message, /spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run/);
  // Eleven of the same rules fit.
  const fits = customResourceTypes(crd({ plural: 'fits', kind: 'Fit', schema: specSchema({ s: { type: 'array', items: { type: 'string' } } }, { 'x-kubernetes-validations': Array.from({ length: 11 }, () => rule) }) }))[0].type;
  await t.notThrowsAsync(f.store.create(fits, 'default', { ...o, kind: 'Fit' }, { ...adminCtx, dryRun: true }));
});
