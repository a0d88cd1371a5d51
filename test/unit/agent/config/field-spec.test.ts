import test from 'ava';
import { decode, defaultOf, mergeOnto, withDefaults, type FieldProblem, type StructSpec } from '../../../../agent/config/field-spec';

interface Demo {
  name: string;
  count: number;
  wait: number;
  on: boolean;
  inner: { a: string; b: number };
  tags: string[];
  labels: Record<string, string>;
  headers: Record<string, string[]>;
  mode: 'x' | 'y';
}

const spec: StructSpec<Demo> = {
  kind: 'struct',
  fields: {
    name: { kind: 'string', default: 'n' },
    count: { kind: 'int', default: 1, min: 0, max: 10 },
    wait: { kind: 'duration', default: 10_000 },
    on: { kind: 'bool', default: true },
    inner: { kind: 'struct', fields: { a: { kind: 'string', default: 'A' }, b: { kind: 'int', default: 2 } } },
    tags: { kind: 'list', of: { kind: 'string', default: '' }, default: ['t'] },
    labels: { kind: 'map', of: { kind: 'string', default: '' }, default: { d: '1' } },
    headers: { kind: 'map', of: { kind: 'list', of: { kind: 'string', default: '' }, default: [] }, default: {} },
    mode: { kind: 'string', default: 'x', enum: ['x', 'y'] },
  },
};

function dec(raw: unknown): unknown {
  const problems: FieldProblem[] = [];
  const v = decode(raw, spec, '', problems);
  if (problems.length) throw new Error(JSON.stringify(problems));
  return v;
}

function merge(base: unknown, raw: unknown, sets: string[] = []): Demo {
  return mergeOnto(base, dec(raw), spec, '', (p) => sets.push(p)) as Demo;
}

const full = () => defaultOf(spec) as Demo;

test('scalars from an overlay replace the base', (t) => {
  const m = merge(full(), { name: 'z', count: 5, on: false, wait: '1m' });
  t.is(m.name, 'z');
  t.is(m.count, 5);
  t.false(m.on);
  t.is(m.wait, 60_000);
});

test('nested structs merge field by field', (t) => {
  const base = merge(full(), { inner: { a: 'base-a', b: 7 } });
  const m = merge(base, { inner: { b: 9 } });
  t.deepEqual(m.inner, { a: 'base-a', b: 9 });
});

test('lists are replaced whole', (t) => {
  const base = merge(full(), { tags: ['a', 'b', 'c'] });
  t.deepEqual(merge(base, { tags: ['z'] }).tags, ['z']);
  t.deepEqual(merge(base, { tags: [] }).tags, []);
});

test('maps merge key by key', (t) => {
  const base = merge(full(), { labels: { a: '1', b: '2' } });
  t.deepEqual(merge(base, { labels: { b: '20', c: '3' } }).labels, { d: '1', a: '1', b: '20', c: '3' });
});

test('a map of string to list replaces the whole list of a key and keeps other keys', (t) => {
  const base = merge(full(), { headers: { A: ['a1', 'a2'], B: ['b1'] } });
  t.deepEqual(merge(base, { headers: { A: ['z'] } }).headers, { A: ['z'], B: ['b1'] });
});

test('null resets a field to its default and deletes a map key', (t) => {
  const base = merge(full(), { count: 7, labels: { a: '1' }, inner: { a: 'q' } });
  const m = merge(base, { count: null, labels: { a: null }, inner: null });
  t.is(m.count, 1);
  t.deepEqual(m.labels, { d: '1' });
  t.deepEqual(m.inner, { a: 'A', b: 2 });
});

test('withDefaults: a base file map or list replaces the default whole (upstream defaulting)', (t) => {
  const v = withDefaults(dec({ labels: { x: '1' }, tags: [] }), spec) as Demo;
  t.deepEqual(v.labels, { x: '1' });
  t.deepEqual(v.tags, []);
  t.is(v.name, 'n');
});

test('merge reports the path of every value it sets', (t) => {
  const sets: string[] = [];
  merge(full(), { name: 'z', inner: { b: 1 }, labels: { k: 'v' }, tags: ['a'] }, sets);
  t.deepEqual(sets, ['name', 'inner.b', 'labels[k]', 'tags']);
});

test('decode collects every problem with its field path', (t) => {
  const problems: FieldProblem[] = [];
  decode(
    { name: 3, count: 11, wait: 5, on: 'yes', inner: { c: 1 }, tags: 'a', labels: { k: 1 }, mode: 'q', extra: true },
    spec,
    '',
    problems,
  );
  t.deepEqual(problems, [
    { field: 'name', message: 'expected a string, got number 3' },
    { field: 'count', message: 'invalid value 11: must be between 0 and 10, inclusive' },
    { field: 'wait', message: 'expected a duration string such as "10s" or "5m0s", got number 5' },
    { field: 'on', message: 'expected a boolean (true or false), got string "yes"' },
    { field: 'inner.c', message: 'unknown field' },
    { field: 'tags', message: 'expected a list, got string "a"' },
    { field: 'labels[k]', message: 'expected a string, got number 1' },
    { field: 'mode', message: 'unsupported value "q": supported values: "x", "y"' },
    { field: 'extra', message: 'unknown field' },
  ]);
});
