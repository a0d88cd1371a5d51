import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import { maxNestingDepth, measureJson } from '../../../../apiserver/patch/json-bounds';
import { isJsonObject, setOwn } from '../../../../apiserver/patch/json-value';
import { MAX_BODY_BYTES, parseDocument } from '../../../../apiserver/server/decode';

// Property-based fuzzing of request body decoding (issue 16, "Keep it found"). Properties:
// - never an unexpected exception: a body decodes, or is refused with an ApiError of a 4xx code
//   (never a 500, never a RangeError from a stack overflow);
// - what decodes is bounded: nesting at most maxNestingDepth, size (aliases expanded) at most the
//   body limit, and no string or key holds a lone UTF-16 surrogate.
// Run counts keep this file to a few seconds on the 2-core machine; fast-check's seed is printed
// on a failure, to replay it.

type Format = 'json' | 'yaml';

function decodeOrRefuse(body: string | Uint8Array, format: Format): { value?: unknown; refused?: ApiError } {
  try {
    return { value: parseDocument(Buffer.from(body), format).value };
  } catch (e) {
    if (e instanceof ApiError && e.code >= 400 && e.code < 500) return { refused: e };
    throw e;
  }
}

const loneSurrogate = /\p{Cs}/u;

/** Every string and key in v (iteratively: v may be a deep DAG of shared aliases, but is bounded by then). */
function everyString(v: unknown, check: (s: string) => void): void {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') check(x);
    else if (Array.isArray(x)) stack.push(...(x as unknown[]));
    else if (isJsonObject(x)) {
      for (const k of Object.keys(x)) {
        check(k);
        stack.push(x[k]);
      }
    }
  }
}

/** The bounds every decoded value satisfies. */
function assertBounded(value: unknown): void {
  const m = measureJson(value, MAX_BODY_BYTES);
  if (m.size > MAX_BODY_BYTES) throw new Error(`decoded value larger than the body limit: ${m.size}`);
  if (m.depth > maxNestingDepth) throw new Error(`decoded value nests ${m.depth} levels`);
  everyString(value, (s) => {
    if (loneSurrogate.test(s)) throw new Error(`lone surrogate in ${JSON.stringify(s)}`);
  });
}

/** Fragments of JSON and YAML syntax, so that generated bodies get past the first character. */
const fragment = fc.constantFrom(
  '{', '}', '[', ']', ',', ':', ': ', '"a"', '"k":', 'a: ', '"\\ud800"', '"\\udc00\\ud800"', '"\\u00', '\\', '&a ', '*a', '&b ', '*b',
  '<<: ', '- ', '? ', '\n', '  ', '    ', 'x', '1', '-0.5e3', 'null', 'true', "'q'", '|\n  t\n', '>-\n  f\n', '!!str ', '!!map ', '!t ', '---\n',
  '...\n', '# c\n', '%YAML 1.2\n', '\t', '"\\U0000D800"', '\u00e9', '\ud800', '"\\ud83d\\ude00"',
);
const soup = fc.array(fragment, { maxLength: 120 }).map((parts) => parts.join(''));
const format = fc.constantFrom<Format>('json', 'yaml');

test('fuzz: arbitrary bytes decode or are refused with a 4xx, and what decodes is bounded', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), format, (bytes, f) => {
      const { value, refused } = decodeOrRefuse(bytes, f);
      if (!refused) assertBounded(value);
    }),
    { numRuns: 400 },
  ),
  );
});

test('fuzz: JSON and YAML syntax soup decodes or is refused with a 4xx, and what decodes is bounded', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(soup, format, (text, f) => {
      const { value, refused } = decodeOrRefuse(text, f);
      if (!refused) assertBounded(value);
    }),
    { numRuns: 1500 },
  ),
  );
});

/** v as JSON.parse gives it back, with every lone surrogate (in strings and keys) replaced by U+FFFD. */
function withoutLoneSurrogates(v: unknown): unknown {
  const fix = (s: string) => s.replace(/\p{Cs}/gu, '\uFFFD');
  if (typeof v === 'string') return fix(v);
  if (Array.isArray(v)) return v.map(withoutLoneSurrogates);
  if (isJsonObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) setOwn(out, fix(k), withoutLoneSurrogates(v[k]));
    return out;
  }
  return v;
}

test('fuzz: any JSON value round-trips through the JSON decoder, lone surrogates becoming U+FFFD', (t) => {
  const value = fc.jsonValue({ maxDepth: 5, stringUnit: 'binary' });
  fc.assert(
    fc.property(value, (v) => {
      const text = JSON.stringify(v);
      const { value: got, refused } = decodeOrRefuse(text, 'json');
      if (refused) throw refused;
      t.deepEqual(got, withoutLoneSurrogates(JSON.parse(text)));
    }),
    { numRuns: 300 },
  );
});

test('fuzz: YAML double-quoted escapes of any UTF-16 code units decode with lone surrogates as U+FFFD', (t) => {
  const units = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 });
  fc.assert(
    fc.property(units, (codes) => {
      const escaped = codes.map((c) => `\\u${c.toString(16).padStart(4, '0')}`).join('');
      const { value, refused } = decodeOrRefuse(`k: "${escaped}"\n`, 'yaml');
      if (refused) throw refused;
      t.deepEqual(value, { k: String.fromCharCode(...codes).replace(/\p{Cs}/gu, '\uFFFD') });
    }),
    { numRuns: 300 },
  );
});

test('fuzz: nesting decodes up to the limit and is refused with 400 beyond it, in both formats', (t) => {
  const opens = fc.array(fc.constantFrom('[', '{"k":'), { maxLength: maxNestingDepth + 200 });
  t.notThrows(() =>
    fc.assert(
    fc.property(opens, format, (levels, f) => {
      const closing = levels.map((o) => (o === '[' ? ']' : '}')).reverse();
      const { refused } = decodeOrRefuse(levels.join('') + '0' + closing.join(''), f);
      if (levels.length <= maxNestingDepth) {
        if (refused) throw refused;
      } else if (refused?.code !== 400 || !/exceeded max depth of 512/.test(refused.message)) {
        throw new Error(`${levels.length} levels not refused as too deep: ${refused?.message}`);
      }
    }),
    { numRuns: 150 },
  ),
  );
});

test('fuzz: YAML alias chains ("billion laughs") decode within the body limit or are refused with 400', (t) => {
  const shape = fc.record({
    levels: fc.integer({ min: 1, max: 10 }),
    fanOut: fc.integer({ min: 1, max: 12 }),
    scalar: fc.integer({ min: 1, max: 20_000 }),
  });
  t.notThrows(() =>
    fc.assert(
    fc.property(shape, ({ levels, fanOut, scalar }) => {
      const lines = [`a0: &a0 ${'x'.repeat(scalar)}`];
      for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array(fanOut).fill(`*a${i - 1}`).join(', ')}]`);
      const { value, refused } = decodeOrRefuse(lines.join('\n'), 'yaml');
      // The JSON size of what the document expands to, level by level.
      let level = scalar + 2;
      let total = levels + 2 + `a0`.length + 3 + level;
      for (let i = 1; i <= levels; i++) {
        level = fanOut + 1 + fanOut * level;
        total += `a${i}`.length + 3 + level;
      }
      if (!refused) {
        assertBounded(value);
        t.is(measureJson(value).size, total);
      } else if (total <= MAX_BODY_BYTES && !/Excessive alias count/.test(refused.message)) {
        // The yaml library's own count guard may refuse first; nothing else may refuse what fits.
        throw new Error(`refused a document of ${total} bytes: ${refused.message}`);
      } else if (refused.code !== 400) {
        throw refused;
      }
    }),
    { numRuns: 200 },
  ),
  );
});
