import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { maxNestingDepth } from '../../../../apiserver/patch/json-bounds';
import { MAX_BODY_BYTES, parseDocument } from '../../../../apiserver/server/decode';

// What every request body is decoded within (issue 16, defects 3 and 7).

function apiError(t: ExecutionContext, fn: () => unknown): ApiError {
  const e = t.throws(fn, { instanceOf: ApiError });
  if (!e) throw new Error('expected an ApiError');
  return e;
}

const decode = (text: string, format: 'json' | 'yaml') => parseDocument(Buffer.from(text), format).value;

test('a YAML body of 3 MB with 99 aliases of one 2.9 MB scalar is refused (400) before it is expanded', (t) => {
  // 99: the most aliases of one scalar the yaml library's own guard (maxAliasCount 100) lets
  // through; they expand to 290 MB.
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: bomb', 'data:', `  big: &big ${'x'.repeat(2_900_000)}`];
  for (let i = 0; i < 99; i++) lines.push(`  k${i}: *big`);
  const body = lines.join('\n');
  t.true(body.length < MAX_BODY_BYTES);
  const e = apiError(t, () => decode(body, 'yaml'));
  t.is(e.code, 400);
  t.is(
    e.message,
    `the body of the request could not be decoded as YAML: yaml: the document is larger than the limit of ${MAX_BODY_BYTES} bytes once its aliases are expanded at line 6, column 3`,
  );
  // Even one alias doubles it past the limit; a 1 MB scalar and one alias are within it.
  t.is(apiError(t, () => decode(lines.slice(0, 7).join('\n'), 'yaml')).code, 400);
  const small = [...lines.slice(0, 5), `  big: &big ${'x'.repeat(1_000_000)}`, '  k0: *big'];
  const one = decode(small.join('\n'), 'yaml') as { data: Record<string, string> };
  t.is(one.data.k0.length, 1_000_000);
});

test('JSON and YAML bodies nest at most maxNestingDepth levels (400 beyond, never a stack overflow)', (t) => {
  t.is(maxNestingDepth, 512);
  const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number) => '{"a":'.repeat(n) + '0' + '}'.repeat(n);
  let block = '';
  for (let i = 0; i < maxNestingDepth; i++) block += `${' '.repeat(i)}a:\n`;
  const blockDeeper = block + `${' '.repeat(maxNestingDepth)}a:\n${' '.repeat(maxNestingDepth + 1)}b: 1\n`;
  t.notThrows(() => decode(arrays(maxNestingDepth), 'json'));
  t.notThrows(() => decode(objects(maxNestingDepth), 'json'));
  t.notThrows(() => decode(arrays(maxNestingDepth), 'yaml'));
  t.notThrows(() => decode(objects(maxNestingDepth), 'yaml'));
  t.notThrows(() => decode(block, 'yaml'));
  for (const [text, format] of [
    [arrays(maxNestingDepth + 1), 'json'],
    [objects(maxNestingDepth + 1), 'json'],
    [arrays(maxNestingDepth + 1), 'yaml'],
    [objects(maxNestingDepth + 1), 'yaml'],
    [blockDeeper, 'yaml'],
    // Far beyond: the yaml library's own stack gives out first; still the same answer.
    [arrays(1_000_000), 'json'],
    [arrays(1_000_000), 'yaml'],
  ] as const) {
    const e = apiError(t, () => decode(text, format));
    t.is(e.code, 400);
    t.regex(e.message, new RegExp(`^the body of the request could not be decoded as (JSON|YAML): (yaml: )?exceeded max depth of ${maxNestingDepth} at line \\d+, column \\d+$`));
  }
});

test('YAML aliases count at their expanded depth', (t) => {
  let chain = 'x';
  for (let i = 0; i < 300; i++) chain = `[${chain}]`;
  // 300 levels anchored, then used inside 300 more: 601 levels once expanded.
  const text = `a: &deep ${chain}\nb: ${'['.repeat(300)}*deep${']'.repeat(300)}\n`;
  const e = apiError(t, () => decode(text, 'yaml'));
  t.regex(e.message, /exceeded max depth of 512/);
});

test('a YAML alias inside the node it names is refused (400): JSON cannot carry the cycle', (t) => {
  const e = apiError(t, () => decode('a: &a [1, *a]\n', 'yaml'));
  t.is(e.code, 400);
  t.is(e.message, 'the body of the request could not be decoded as YAML: yaml: alias *a refers to a node that contains it at line 1, column 11');
});

test('a lone UTF-16 surrogate escape decodes as U+FFFD in JSON and YAML; pairs decode as one character', (t) => {
  for (const format of ['json', 'yaml'] as const) {
    t.deepEqual(decode('{"a":"\\ud800","b":"x\\udfffy","\\udc00":"k"}', format), { a: '\uFFFD', b: 'x\uFFFDy', '\uFFFD': 'k' }, format);
    t.deepEqual(decode('["\\ud83d\\ude00", "\\ude00\\ud83d", "\\ud83d\\u0041"]', format), ['😀', '\uFFFD\uFFFD', '\uFFFDA'], format);
  }
  // Nothing decoded re-encodes as a lone surrogate escape.
  const out = JSON.stringify(decode('{"metadata":{"name":"n","annotations":{"a":"\\udbff"}}}', 'json'));
  t.notRegex(out, /\\ud[89a-f][0-9a-f]{2}/i);
});
