import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import type { Schema } from '../../../../apiserver/api/schema';
import { maxNestingDepth, measureJson } from '../../../../apiserver/patch/json-bounds';
import { applyPatch, defaultPatchBounds, type PatchFormat } from '../../../../apiserver/patch/patch-by-format';

// Every patch format is bounded by what it produces (issue 16): a patched object larger than the
// body limit is 413, one nested deeper than the decoders accept is 422.

function apiError(t: ExecutionContext, fn: () => unknown): ApiError {
  const e = t.throws(fn, { instanceOf: ApiError });
  if (!e) throw new Error('expected an ApiError');
  return e;
}

const schema: Schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: { type: 'string' }, annotations: { type: 'map', values: { type: 'string' } } } },
    data: { type: 'map', values: { type: 'string' } },
    spec: {
      type: 'object',
      properties: {
        items: { type: 'array', listType: 'map', mapKeys: ['name'], items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'string' } } } },
        extra: { type: 'any' },
      },
    },
  },
};

/** A ConfigMap-like object whose data holds about `bytes` bytes in 1 KiB values. */
function withData(bytes: number, prefix: string): Record<string, string> {
  const data: Record<string, string> = {};
  for (let i = 0; i < bytes / 1024; i++) data[`${prefix}${i}`] = 'v'.repeat(1024);
  return data;
}

test('each format refuses a patched object larger than the body limit with 413', (t) => {
  const current = { metadata: { name: 'big' }, data: withData(2 * 1024 * 1024, 'old') };
  const grow = withData(2 * 1024 * 1024, 'new');
  const patches: Record<PatchFormat, unknown> = {
    'merge-patch': { data: grow },
    'strategic-merge-patch': { data: grow },
    'json-patch': Object.entries(grow).map(([k, v]) => ({ op: 'add', path: `/data/${k}`, value: v })),
  };
  for (const [format, patch] of Object.entries(patches) as Array<[PatchFormat, unknown]>) {
    const e = apiError(t, () => applyPatch(format, current, patch, schema));
    t.is(e.code, 413, format);
    t.is(e.message, `the patched object is larger than the limit of ${defaultPatchBounds.maxBytes} bytes`, format);
  }
  // Replacing the data instead of adding to it stays within the limit.
  const out = applyPatch('merge-patch', current, { data: null }, schema);
  t.deepEqual(out, { metadata: { name: 'big' } });
});

test('a JSON patch cannot build an object nested deeper than the decoders accept (422)', (t) => {
  let half: unknown = 'leaf';
  for (let i = 0; i < 300; i++) half = { a: half };
  const ops = [
    { op: 'add', path: '/spec', value: { extra: half } },
    // Copy the 300-level value into its own innermost object: 600 levels under /spec/extra.
    { op: 'copy', from: '/spec/extra', path: '/spec/extra' + '/a'.repeat(300) },
  ];
  const e = apiError(t, () => applyPatch('json-patch', { metadata: { name: 'x' } }, ops, schema));
  t.is(e.code, 422);
  t.is(e.message, `the patched object nests deeper than ${maxNestingDepth} levels of objects and arrays`);
  // One copy less deep is accepted.
  const ok = applyPatch('json-patch', { metadata: { name: 'x' } }, [ops[0], { ...ops[1], path: '/spec/extra' + '/a'.repeat(150) }], schema);
  t.true(measureJson(ok).depth <= maxNestingDepth);
});

test('many $patch: delete directives on a long keyed list cost linear work, not one pass of the list each', (t) => {
  // 40,000 deletions from a 40,000-element list: one filter over the list, where a filter per
  // directive made 1.6e9 comparisons (minutes).
  const n = 40_000;
  const items = Array.from({ length: n }, (_, i) => ({ name: `n${i}`, v: 'x' }));
  const patch = { spec: { items: Array.from({ length: n }, (_, i) => ({ $patch: 'delete', name: `n${i}` })) } };
  const out = applyPatch('strategic-merge-patch', { spec: { items } }, patch, schema) as { spec: { items: unknown[] } };
  t.deepEqual(out.spec.items, []);
});

test('managedFields may nest a few levels deeper than the limit, so that a stored object can always be patched again', (t) => {
  const chain = (n: number): unknown => (n === 0 ? {} : { 'f:a': chain(n - 1) });
  // A spec field at the limit, and managedFields owning it, 6 levels deeper.
  let spec: unknown = 0;
  for (let i = 0; i < maxNestingDepth - 2; i++) spec = { a: spec };
  const stored = {
    metadata: { name: 'x', managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': chain(maxNestingDepth) } }] },
    spec: { extra: spec },
  };
  t.is(measureJson({ spec: stored.spec }).depth, maxNestingDepth);
  t.true(measureJson(stored).depth > maxNestingDepth);
  t.notThrows(() => applyPatch('merge-patch', stored, { metadata: { annotations: { a: 'b' } } }, schema));
  t.notThrows(() => applyPatch('json-patch', stored, [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }], schema));
  // Its other fields may not go deeper, and managedFields not beyond the allowance.
  const e = apiError(t, () => applyPatch('json-patch', stored, [{ op: 'add', path: '/spec/extra' + '/a'.repeat(maxNestingDepth - 2), value: {} }], schema));
  t.is(e.code, 422);
  const mf = apiError(t, () => applyPatch('json-patch', stored, [{ op: 'copy', from: '/metadata/managedFields/0/fieldsV1', path: '/metadata/managedFields/0/fieldsV1/f:spec/f:a/f:b' }], schema));
  t.is(mf.code, 422);
});
