import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import type { Schema } from '../../../../apiserver/api/schema';
import { maxNestingDepth, measureJson } from '../../../../apiserver/patch/json-bounds';
import { isJsonObject } from '../../../../apiserver/patch/json-value';
import { applyPatch, type PatchBounds, type PatchFormat } from '../../../../apiserver/patch/patch-by-format';
import { podSchema } from '../../../../apiserver/registry/types/pod-schema';

// Property-based fuzzing of the three patch engines (issue 16, "Keep it found"), through
// applyPatch as the handlers call it, with small bounds so that the bounds are reached:
// - never an unexpected exception: a patch applies, or is refused with an ApiError of a 4xx code;
// - what a patch produces is bounded: at most bounds.maxBytes, nested at most maxNestingDepth, and
//   never larger than (object + patch) for merge and strategic merge patches, or than
//   (object + patch + maxCopyBytes) for JSON patches: amplification is at most that multiple;
// - neither input is mutated.
// Run counts keep this file to a few seconds on the 2-core machine.

const bounds: PatchBounds = { maxBytes: 1024, maxCopyBytes: 512, maxWork: 64 };
const size = (v: unknown) => measureJson(v).size;

function applyOrRefuse(format: PatchFormat, doc: unknown, patch: unknown, schema: Schema): { result?: unknown; refused?: ApiError } {
  const before = JSON.stringify([doc, patch]);
  let out: { result?: unknown; refused?: ApiError };
  try {
    out = { result: applyPatch(format, doc, patch, schema, bounds) };
  } catch (e) {
    if (!(e instanceof ApiError) || e.code < 400 || e.code >= 500) throw e;
    out = { refused: e };
  }
  if (JSON.stringify([doc, patch]) !== before) throw new Error('the patch engine mutated its input');
  return out;
}

function assertBounded(result: unknown, ceiling: number): void {
  const m = measureJson(result);
  if (m.size > bounds.maxBytes) throw new Error(`result of ${m.size} bytes passed the bound`);
  if (m.size > ceiling) throw new Error(`result of ${m.size} bytes is larger than its inputs allow (${ceiling})`);
  if (m.depth > maxNestingDepth) throw new Error(`result nests ${m.depth} levels`);
}

const key = fc.constantFrom('a', 'b', 'c', 'x', '0', '1', '-', '__proto__', 'constructor', '~', '/', '$patch', '$retainKeys', '$setElementOrder/a', '$deleteFromPrimitiveList/a');
const leaf = fc.oneof(fc.constantFrom(null, true, 0, -1, 1.5, '', 'v', 'delete', 'replace', 'merge'), fc.string({ maxLength: 40 }));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;
const object = fc.dictionary(key, json, { maxKeys: 5 });
const anySchema: Schema = { type: 'any' };

test('fuzz: merge patches apply or are refused with a 4xx; the result is at most object + patch', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(object, json, (doc, patch) => {
      const { result } = applyOrRefuse('merge-patch', doc, patch, anySchema);
      if (result !== undefined) assertBounded(result, size(doc) + size(patch));
    }),
    { numRuns: 600 },
  ),
  );
});

/** arb now and then (one time in five), otherwise absent. */
function rare<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

/** A record of optional fields, those left undefined removed (a present-but-undefined directive would be malformed). */
function fields(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(shape, { requiredKeys: [] }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
}

/** Pieces of pods: keyed lists (containers, env, ports), sets (finalizers), schemaless fields, and now and then a directive. */
const name = fc.constantFrom('a', 'b', 'c');
const directive = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('delete', 'replace', 'merge') }, { weight: 1, arbitrary: fc.constantFrom('bogus', 1, null) });
const container = fields({
  name,
  image: fc.constantFrom('i:1', 'i:2', null),
  args: fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }),
  env: fc.array(fields({ name, value: fc.constantFrom('1', '2'), $patch: rare(directive) }), { maxLength: 3 }),
  ports: fc.array(fields({ containerPort: fc.constantFrom(80, 443), protocol: fc.constantFrom('TCP', 'UDP') }), { maxLength: 3 }),
  lifecycle: json,
  $patch: rare(directive),
  '$deleteFromPrimitiveList/args': rare(fc.oneof({ weight: 4, arbitrary: fc.array(fc.constantFrom('x', 'y')) }, { weight: 1, arbitrary: leaf })),
  '$setElementOrder/env': rare(fc.oneof({ weight: 4, arbitrary: fc.array(fields({ name }), { maxLength: 3 }) }, { weight: 1, arbitrary: leaf })),
});
const pod = fields({
  metadata: fields({
    name: fc.constant('p'),
    labels: fc.oneof(fc.dictionary(name, fc.constantFrom('v', 'w', null)), fc.constant(null)),
    finalizers: fc.array(fc.constantFrom('f1', 'f2'), { maxLength: 3 }),
    $retainKeys: rare(fc.oneof({ weight: 4, arbitrary: fc.array(fc.constantFrom('name', 'labels', 'finalizers')) }, { weight: 1, arbitrary: leaf })),
  }),
  spec: fields({
    containers: fc.oneof({ weight: 6, arbitrary: fc.array(container, { maxLength: 3 }) }, { weight: 1, arbitrary: leaf }),
    '$setElementOrder/containers': rare(fc.oneof({ weight: 4, arbitrary: fc.array(fields({ name }), { maxLength: 3 }) }, { weight: 1, arbitrary: leaf })),
    tolerations: fc.array(json, { maxLength: 2 }),
    affinity: json,
    $patch: rare(directive),
  }),
});

test('fuzz: strategic merge patches on pods apply or are refused with a 4xx; the result is at most object + patch', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(pod, fc.oneof({ weight: 4, arbitrary: pod }, { weight: 1, arbitrary: json }), (doc, patch) => {
      const { result } = applyOrRefuse('strategic-merge-patch', doc, patch, podSchema);
      if (result !== undefined) assertBounded(result, size(doc) + size(patch));
    }),
    { numRuns: 600 },
  ),
  );
});

/** Every JSON pointer into v (containers and leaves), iteratively. */
function pointers(v: unknown): string[] {
  const out: string[] = [''];
  const stack: Array<[unknown, string]> = [[v, '']];
  while (stack.length > 0 && out.length < 200) {
    const [x, at] = stack.pop()!;
    const children: Array<[string, unknown]> = Array.isArray(x) ? x.map((c, i) => [String(i), c]) : isJsonObject(x) ? Object.entries(x) : [];
    for (const [k, c] of children) {
      const p = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      out.push(p);
      stack.push([c, p]);
    }
  }
  return out;
}

/** The value at a pointer that pointers() gave. */
function get(v: unknown, pointer: string): unknown {
  let x = v;
  for (const token of pointer.slice(1).split('/')) {
    const k = token.replace(/~1/g, '/').replace(/~0/g, '~');
    x = Array.isArray(x) ? x[Number(k)] : (x as Record<string, unknown>)[k];
  }
  return x;
}

/** A document and JSON patch operations over its own paths (or their children), so that most operations apply. */
const docAndOps = object.chain((doc) => {
  const real = fc.constantFrom(...pointers(doc));
  // New children of what exists (where add and copy go), and now and then a malformed pointer.
  const child = real.chain((p) => fc.constantFrom(`${p}/-`, `${p}/0`, `${p}/n`));
  const ptr = fc.oneof({ weight: 15, arbitrary: real }, { weight: 15, arbitrary: child }, { weight: 1, arbitrary: fc.constantFrom('/zz', 'a', '/~2', '/a/01') });
  const op = fc.oneof(
    { weight: 8, arbitrary: fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: ptr, value: json }) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('remove'), path: ptr }) },
    { weight: 8, arbitrary: fc.record({ op: fc.constantFrom('move', 'copy'), from: real, path: ptr }) },
    // Malformed now and then: an unknown op, or one missing what its kind needs.
    { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('bogus', 'add', 'move'), path: ptr }, { requiredKeys: ['op'] }) },
  );
  // Copying a subtree into itself, over and over, doubles it each time: the amplification the
  // copy limit is for. Up to 40 times: unbounded, that is 2^40 times the subtree (the run would
  // never end), so this property also stands for "work bounded by what the patch produces".
  const objects = pointers(doc).filter((p) => isJsonObject(p === '' ? doc : get(doc, p)));
  const doubling = fc
    .tuple(fc.constantFrom(...objects), fc.integer({ min: 1, max: 40 }))
    .map(([p, n]) => Array.from({ length: n }, (_, i) => ({ op: 'copy', from: p, path: `${p}/d${i}` })));
  const mixed = fc.array(fc.oneof({ weight: 6, arbitrary: op.map((o) => [o]) }, { weight: 1, arbitrary: doubling }), { maxLength: 12 }).map((groups) => groups.flat());
  return fc.tuple(fc.constant(doc), fc.oneof({ weight: 4, arbitrary: mixed }, { weight: 1, arbitrary: doubling }));
});

test('fuzz: JSON patches apply or are refused with a 4xx; the result is at most object + patch + the copy limit', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(docAndOps, ([doc, ops]) => {
      const { result } = applyOrRefuse('json-patch', doc, ops, anySchema);
      if (result !== undefined) assertBounded(result, size(doc) + size(ops) + bounds.maxCopyBytes);
    }),
    { numRuns: 600 },
  ),
  );
});

test('fuzz: a patch that is not of its format’s shape is refused with a 4xx, never more', (t) => {
  const formats = fc.constantFrom<PatchFormat>('json-patch', 'merge-patch', 'strategic-merge-patch');
  t.notThrows(() =>
    fc.assert(
    fc.property(formats, json, json, (format, doc, patch) => {
      const { result } = applyOrRefuse(format, doc, patch, format === 'strategic-merge-patch' ? podSchema : anySchema);
      if (result !== undefined) assertBounded(result, size(doc) + size(patch) + bounds.maxCopyBytes);
    }),
    { numRuns: 600 },
  ),
  );
});
