import test from 'ava';
import { checkYamlExpansion, parseYamlDocuments, YamlTooDeep } from '../../../../apiserver/validation/yaml-bounds';

const one = (text: string) => {
  const docs = parseYamlDocuments(text, 512);
  if (docs.length !== 1 || docs[0].errors.length > 0) throw new Error(`expected one good document: ${docs[0]?.errors[0]?.message}`);
  return docs[0];
};
const problem = (text: string, maxBytes: number, maxDepth = 512) => checkYamlExpansion(one(text), maxBytes, maxDepth);

test('parsing stops as soon as the nesting passes the limit, wherever the rest of the text goes', (t) => {
  for (const open of ['[', '{a: ', '- ', '? ']) {
    const text = open.repeat(1_000_000) + 'x';
    const e = t.throws(() => parseYamlDocuments(text, 100), { instanceOf: YamlTooDeep });
    // Stopped within a few levels past the limit: the other 999,900 were never parsed.
    t.true(e.offset <= 103 * open.length, `${open}: ${e.offset}`);
    t.is(e.message, 'exceeded max depth of 100');
  }
  let block = '';
  for (let i = 0; i < 200; i++) block += `${' '.repeat(i)}a:\n`;
  t.throws(() => parseYamlDocuments(block, 100), { instanceOf: YamlTooDeep });
  t.is(parseYamlDocuments(block, 200).length, 1);
});

test('aliases count by the size they expand to: nested "billion laughs" and one big scalar', (t) => {
  const laughs = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let i = 0; i < 9; i++) {
    const [p, n] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
    laughs.push(`${n}: &${n} [${Array(10).fill(`*${p}`).join(', ')}]`);
  }
  const p = problem(laughs.join('\n'), 3 * 1024 * 1024);
  t.regex(p?.message ?? '', /^the document is larger than the limit of 3145728 bytes once its aliases are expanded$/);
  // Within the limit: the measure is the size of the JSON it becomes.
  const text = 'a: &a hello\nb: [*a, *a]\n';
  const json = JSON.stringify({ a: 'hello', b: ['hello', 'hello'] });
  t.is(problem(text, json.length), undefined);
  t.truthy(problem(text, json.length - 1));
});

test('merge keys and collection keys count at their expanded size', (t) => {
  const big = 'x'.repeat(1000);
  t.truthy(problem(`base: &b {k: ${big}}\n${Array.from({ length: 5 }, (_, i) => `m${i}: {<<: *b}`).join('\n')}\n`, 5000));
  t.is(problem(`base: &b {k: ${big}}\nm0: {<<: *b}\n`, 5000), undefined);
  // A key that is a sequence of aliases becomes a string of their expansion.
  t.truthy(problem(`a: &a ${big}\n? [${Array(10).fill('*a').join(', ')}]\n: v\n`, 5000));
});

test('aliases count at their expanded depth', (t) => {
  const text = `a: &a ${'['.repeat(40)}${']'.repeat(40)}\nb: ${'['.repeat(40)}*a${']'.repeat(40)}\n`;
  t.is(problem(text, 1e6, 81), undefined);
  t.regex(problem(text, 1e6, 80)?.message ?? '', /^exceeded max depth of 80$/);
});

test('lone surrogates in scalars and keys become U+FFFD; pairs stay', (t) => {
  const doc = one('"\\ud800k": ["\\udfff", "\\U0000D800", "\\ud83d\\ude00", plain]\n');
  t.is(checkYamlExpansion(doc, 1e6, 512), undefined);
  t.deepEqual(doc.toJS(), { '\uFFFDk': ['\uFFFD', '\uFFFD', '😀', 'plain'] });
});

test('an alias inside the node it names is refused: JSON cannot carry a cycle', (t) => {
  for (const text of ['a: &a [1, *a]\n', 'a: &a {b: *a}\n', '&a [*a]\n']) {
    t.regex(problem(text, 1e6)?.message ?? '', /^alias \*a refers to a node that contains it$/, text);
  }
  // An alias of an earlier anchor inside another anchored node is no cycle; the anchor names
  // the node it is on from where it is set, as YAML resolves it (the last one before the alias).
  t.is(problem('a: &a [1]\nb: &b [*a]\n', 1e6), undefined);
  t.truthy(problem('a: &a [1]\nb: &a [*a]\n', 1e6));
});
