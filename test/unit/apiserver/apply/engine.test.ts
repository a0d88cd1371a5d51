/**
 * The apply engine on schemas of its own: custom-resource style schemas (issue 22 maps the
 * x-kubernetes-* markers onto the same Schema fields; unmarked lists are atomic and untyped
 * objects merge key by key), a type that turns atomic, FieldsV1 round trips and set algebra.
 */
import test from 'ava';
import fc from 'fast-check';
import type { ObjectSchema, Schema } from '../../../../apiserver/api/schema';
import type { KObject } from '../../../../apiserver/api/types';
import { applyConfiguration, managedFieldsAfterWrite } from '../../../../apiserver/apply/field-manager';
import { difference, EMPTY, intersection, isEmpty, setOf, union, type FieldSet } from '../../../../apiserver/apply/field-set';
import { fromFieldsV1, toFieldsV1 } from '../../../../apiserver/apply/fields-v1';
import { fieldSetOf } from '../../../../apiserver/apply/to-field-set';

const str: Schema = { type: 'string' };
const item: ObjectSchema = { type: 'object', properties: { name: str, value: str } };

/** A CRD-like kind: what issue 22 builds from an openAPIV3Schema with and without x-kubernetes-* markers. */
function crd(spec: Record<string, Schema>): ObjectSchema {
  return {
    type: 'object',
    properties: {
      apiVersion: str,
      kind: str,
      metadata: { type: 'object', properties: { name: str, namespace: str, labels: { type: 'map', values: str } } },
      spec: { type: 'object', properties: spec },
    },
  };
}

const schema = crd({
  items: { type: 'array', items: item }, // no x-kubernetes-list-type: atomic
  keyed: { type: 'array', listType: 'map', mapKeys: ['name'], items: item }, // x-kubernetes-list-type: map
  tags: { type: 'array', listType: 'set', items: str },
  settings: { type: 'map', values: str }, // additionalProperties
  frozen: { type: 'map', values: str, atomic: true }, // x-kubernetes-map-type: atomic
  free: { type: 'any' }, // x-kubernetes-preserve-unknown-fields
});
const scope = (s: ObjectSchema = schema, time = '2025-01-01T00:00:00Z') => ({ schema: s, apiVersion: 'example.com/v1', subresource: '', time, ignore: EMPTY });
const widget = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec });

test('a custom resource’s markers decide ownership; unmarked lists are atomic and untyped objects go key by key', (t) => {
  const out = applyConfiguration(
    null,
    widget({ items: [{ name: 'a' }], keyed: [{ name: 'a', value: '1' }], tags: ['x'], settings: { s: '1' }, frozen: { f: '1' }, free: { a: { b: 1 }, c: [1] } }),
    'mgr',
    false,
    scope(),
  );
  t.deepEqual(out.metadata.managedFields?.[0].fieldsV1, {
    'f:spec': {
      'f:free': { 'f:a': { '.': {}, 'f:b': {} }, 'f:c': {} },
      'f:frozen': {},
      'f:items': {},
      'f:keyed': { 'k:{"name":"a"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
      'f:settings': { 'f:s': {} },
      'f:tags': { 'v:"x"': {} },
    },
  });
});

test('a custom resource’s atomic list conflicts whole; its keyed list merges by key', (t) => {
  const live = applyConfiguration(null, widget({ items: [{ name: 'a' }], keyed: [{ name: 'a', value: '1' }] }), 'one', false, scope());
  live.metadata.uid = 'u';
  const merged = applyConfiguration(live, widget({ keyed: [{ name: 'b', value: '2' }] }), 'two', false, scope());
  t.deepEqual((merged.spec as any).keyed, [
    { name: 'a', value: '1' },
    { name: 'b', value: '2' },
  ]);
  const err = t.throws(() => applyConfiguration(live, widget({ items: [{ name: 'b' }] }), 'two', false, scope()));
  t.is(err?.message, 'Apply failed with 1 conflict: conflict with "one": .spec.items');
});

test('a type that turned atomic: who owned its parts owns the whole', (t) => {
  const granular = crd({ selector: { type: 'map', values: str } });
  const atomic = crd({ selector: { type: 'map', values: str, atomic: true } });
  let obj = applyConfiguration(null, widget({ selector: { a: '1' } }), 'one', false, scope(granular));
  obj.metadata.uid = 'u';
  obj = applyConfiguration(obj, widget({ selector: { b: '2' } }), 'two', false, scope(granular));
  obj.metadata.uid = 'u';
  const next = structuredClone(obj);
  next.metadata.labels = { l: 'x' };
  const mf = managedFieldsAfterWrite(obj, next, 'labeler', scope(atomic, '2025-01-01T00:01:00Z'))!;
  t.deepEqual(
    mf.map((e) => [e.manager, e.fieldsV1]),
    [
      ['one', { 'f:spec': { 'f:selector': {} } }],
      ['two', { 'f:spec': { 'f:selector': {} } }],
      ['labeler', { 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } }],
    ],
  );
});

test('FieldsV1 keys are read canonically: key fields sorted, values as Go writes them', (t) => {
  const s = fromFieldsV1({ 'f:spec': { 'f:ports': { 'k:{"protocol":"TCP","port":80}': { '.': {}, 'f:name': {} } } }, 'f:x': { 'v:"a<b"': {} }, 'q:unknown': {} });
  t.deepEqual(toFieldsV1(s), { 'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {} } } }, 'f:x': { 'v:"a\\u003cb"': {} } });
  t.throws(() => fromFieldsV1({ 'k:{not json': {} }));
});

test('FieldsV1 is written in upstream’s element order: fields, then keys (by value), then values', (t) => {
  const s = setOf([['f:l', 'v:"b"'], ['f:l', 'k:{"n":2}'], ['f:l', 'k:{"n":10}'], ['f:l', 'v:1'], ['f:l', 'f:z'], ['f:l', 'f:a']]);
  t.deepEqual(Object.keys(toFieldsV1(s)['f:l'] as object), ['f:a', 'f:z', 'k:{"n":2}', 'k:{"n":10}', 'v:1', 'v:"b"']);
});

/** Random small sets over a few elements, as trees. */
const arbSet: fc.Arbitrary<FieldSet> = fc.array(fc.array(fc.constantFrom('f:a', 'f:b', 'k:{"n":1}', 'v:"x"'), { minLength: 1, maxLength: 3 }), { maxLength: 8 }).map((paths) => setOf(paths));
const paths = (s: FieldSet): string[] => {
  const out: string[] = [];
  const walk = (n: FieldSet, p: string) => {
    for (const [pe, c] of n.children ?? []) {
      if (c.member) out.push(`${p}/${pe}`);
      walk(c, `${p}/${pe}`);
    }
  };
  walk(s, '');
  return out.sort();
};

test('set algebra agrees with the sets of paths it stands for', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(arbSet, arbSet, (a, b) => {
        const pa = new Set(paths(a));
        const pb = new Set(paths(b));
        const same = (s: FieldSet, want: string[]) => JSON.stringify(paths(s)) === JSON.stringify(want.sort());
        return (
          same(union(a, b), [...new Set([...pa, ...pb])]) &&
          same(intersection(a, b), [...pa].filter((p) => pb.has(p))) &&
          same(difference(a, b), [...pa].filter((p) => !pb.has(p))) &&
          isEmpty(difference(a, a)) &&
          JSON.stringify(fromFieldsV1(toFieldsV1(a))) === JSON.stringify(a)
        );
      }),
    ),
  );
});

test('the field set of a value is built in one walk: a deep object costs its size, not size × depth', (t) => {
  let deep: unknown = 'leaf';
  for (let i = 0; i < 400; i++) deep = { [`k${i % 7}`]: deep, side: 'x' };
  const s = fieldSetOf({ spec: { free: deep } }, crd({ free: { type: 'any' } }));
  let nodes = 0;
  const count = (n: FieldSet) => {
    for (const c of n.children?.values() ?? []) {
      nodes++;
      count(c);
    }
  };
  count(s);
  t.is(nodes, 2 + 400 * 2);
});
