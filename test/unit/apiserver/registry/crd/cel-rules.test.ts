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

// optionalOldSelf: the transition rule also runs on create and for values without an old one, oldSelf an optional.
const optionalSchema = specSchema({
  size: { type: 'integer', 'x-kubernetes-validations': [{ rule: '!oldSelf.hasValue() || self >= oldSelf.value()', message: 'may not shrink', optionalOldSelf: true }] },
  // Set once: on create any value; added later only as "first"; never changed.
  owner: { type: 'string', 'x-kubernetes-validations': [{ rule: 'oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith("first")', message: 'owner is set once', optionalOldSelf: true }] },
  label: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf.orValue("none") || !oldSelf.hasValue()', optionalOldSelf: true }] },
  plain: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'plain is immutable', optionalOldSelf: false }] },
});
const optionalWidget = customResourceTypes(crd({ schema: optionalSchema, plural: 'optwidgets', kind: 'OptWidget' }))[0].type;
const optObj = (spec: Record<string, unknown>, name: string): KObject => ({ apiVersion: 'example.com/v1', kind: 'OptWidget', metadata: { name, namespace: 'default' }, spec });
const upd = (name: string, spec: Record<string, unknown>) =>
  f.store.update(optionalWidget, 'default', name, (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), ...spec } }), adminCtx);

test('optionalOldSelf: the rule runs on create with oldSelf optional.none(), on update with optional.of the old value', async (t) => {
  // On create: no old value, the rule still runs (owner must start with "first").
  await t.throwsAsync(f.store.create(optionalWidget, 'default', optObj({ owner: 'someone' }, 'o1'), adminCtx), { message: /spec\.owner: Invalid value: "string": owner is set once/ });
  await f.store.create(optionalWidget, 'default', optObj({ size: 3, owner: 'first-team' }, 'o1'), adminCtx);
  await t.throwsAsync(upd('o1', { size: 2 }), { message: /spec\.size: Invalid value: "integer": may not shrink/ });
  await t.notThrowsAsync(upd('o1', { size: 4 }));
  await t.throwsAsync(upd('o1', { owner: 'first-other' }), { message: /owner is set once/ });
  // A value that had no old one (added by an update) sees optional.none(): the "first" branch.
  await f.store.create(optionalWidget, 'default', optObj({ size: 1 }, 'o2'), adminCtx);
  await t.throwsAsync(upd('o2', { owner: 'late' }), { message: /owner is set once/ });
  await t.notThrowsAsync(upd('o2', { owner: 'first-late', label: 'x' }));
  // orValue: with an old value, label may not change.
  await t.throwsAsync(upd('o2', { label: 'y' }), { message: /spec\.label: Invalid value: "string": failed rule: self == oldSelf\.orValue\("none"\)/ });
  // optionalOldSelf false: an ordinary transition rule, skipped on create.
  await f.store.create(optionalWidget, 'default', optObj({ plain: 'p' }, 'o3'), adminCtx);
  await t.throwsAsync(upd('o3', { plain: 'q' }), { message: /plain is immutable/ });
});

test('optionalOldSelf may be set only on a rule that reads oldSelf (upstream\'s message)', async (t) => {
  const bad = crd({ schema: specSchema({ a: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() > 1', optionalOldSelf: true }] } }) });
  await t.throwsAsync(f.store.create(crds(), '', bad, { ...adminCtx, dryRun: true }), {
    message: /properties\[a\]\.x-kubernetes-validations\[0\]\.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule/,
  });
  await t.notThrowsAsync(f.store.create(crds(), '', crd({ schema: optionalSchema, plural: 'optwidgets', kind: 'OptWidget' }), { ...adminCtx, dryRun: true }));
});
