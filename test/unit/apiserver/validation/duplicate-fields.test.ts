import test, { type ExecutionContext } from 'ava';
import {
  BodySyntaxError,
  parseJsonWithDuplicates,
  parseYamlWithDuplicates,
} from '../../../../apiserver/validation/duplicate-fields';

function syntaxError(t: ExecutionContext, fn: () => unknown): BodySyntaxError {
  const e = t.throws(fn, { instanceOf: BodySyntaxError });
  if (!e) throw new Error('expected a BodySyntaxError');
  return e;
}

test('parses the same values as JSON.parse', (t) => {
  const samples = [
    '{}',
    '[]',
    ' \t\r\n{ "a" : [ 1 , -2.5e+3 , 0 , -0 , 1E2 , 0.125 ] , "b" : { "c" : null , "d" : true , "e" : false } } \n',
    '"just a string"',
    '42',
    'null',
    '"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 ü 😀"',
    '[[[[]]],{"":{"":""}}]',
    '{"big":12345678901234567890,"tiny":1e-400,"neg":-1.5E-2}',
  ];
  for (const s of samples) {
    const { value, duplicates } = parseJsonWithDuplicates(s);
    t.deepEqual(value, JSON.parse(s), s);
    t.deepEqual(duplicates, []);
  }
});

test('reports duplicate keys as paths; the last value wins', (t) => {
  const text = `{
    "metadata": {"name": "a", "labels": {"x": "1"}, "name": "b", "labels": {"y": "2"}},
    "spec": {"paused": false, "paused": true,
      "containers": [{"name": "c", "image": "i1", "image": "i2", "image": "i3"}]}
  }`;
  const { value, duplicates } = parseJsonWithDuplicates(text);
  t.deepEqual(value, {
    metadata: { name: 'b', labels: { y: '2' } },
    spec: { paused: true, containers: [{ name: 'c', image: 'i3' }] },
  });
  t.deepEqual(duplicates, ['.metadata.name', '.metadata.labels', '.spec.paused', '.spec.containers[0].image']);
});

test('duplicates inside a value that is later overwritten are still reported', (t) => {
  const { value, duplicates } = parseJsonWithDuplicates('{"a":{"x":1,"x":2},"a":3}');
  t.deepEqual(value, { a: 3 });
  t.deepEqual(duplicates, ['.a.x', '.a']);
});

test('a __proto__ key is an ordinary member', (t) => {
  const { value } = parseJsonWithDuplicates('{"__proto__": {"polluted": true}}');
  t.deepEqual(Object.keys(value as object), ['__proto__']);
  t.is(Object.getPrototypeOf(value), Object.prototype);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('malformed JSON: Go-like messages with line and column', (t) => {
  const cases: Array<[string, string, number, number]> = [
    ['', 'unexpected end of JSON input', 1, 1],
    ['{"a": 1', 'unexpected end of JSON input', 1, 8],
    ['{"a": 1,}', "invalid character '}' looking for beginning of object key string", 1, 9],
    ['[1,]', "invalid character ']' looking for beginning of value", 1, 4],
    ['{\n  "a" 1\n}', "invalid character '1' after object key", 2, 7],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`, 1, 8],
    ['[1 2]', "invalid character '2' after array element", 1, 4],
    ['{} x', "invalid character 'x' after top-level value", 1, 4],
    ['tru', 'unexpected end of JSON input', 1, 4],
    ['nul!', "invalid character '!' in literal null (expecting 'l')", 1, 4],
    ['01', "invalid character '1' after top-level value", 1, 2],
    ['-', 'unexpected end of JSON input', 1, 2],
    ['1.e5', "invalid character 'e' after decimal point in numeric literal", 1, 3],
    ['1e+', 'unexpected end of JSON input', 1, 4],
    ['"a\tb"', "invalid character '\\x09' in string literal", 1, 3],
    ['"\\x"', "invalid character 'x' in string escape code", 1, 3],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape", 1, 6],
    ['"open', 'unexpected end of JSON input', 1, 6],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string", 1, 2],
    ['{"a":1}\n\n  ]', "invalid character ']' after top-level value", 3, 3],
  ];
  for (const [text, message, line, column] of cases) {
    const e = syntaxError(t, () => parseJsonWithDuplicates(text));
    t.is(e.message, `${message} at line ${line}, column ${column}`, JSON.stringify(text));
    t.is(e.line, line);
    t.is(e.column, column);
    t.true(e instanceof SyntaxError);
    t.throws(() => JSON.parse(text), undefined, `JSON.parse agrees ${JSON.stringify(text)} is malformed`);
  }
});

test('deep nesting is parsed without recursion, up to Go’s limit', (t) => {
  const depth = 9000;
  const { value } = parseJsonWithDuplicates('['.repeat(depth) + ']'.repeat(depth));
  let v: unknown = value;
  let n = 0;
  while (Array.isArray(v) && v.length > 0) {
    v = v[0];
    n++;
  }
  t.is(n, depth - 1);
  const e = syntaxError(t, () => parseJsonWithDuplicates('['.repeat(10001) + ']'.repeat(10001)));
  t.regex(e.message, /exceeded max depth of 10000/);
});

test('YAML: values decode and duplicate keys are reported with last value winning', (t) => {
  const text = [
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    '  name: a',
    '  name: b',
    '  labels: {x: "1", x: "2"}',
    'spec:',
    '  containers:',
    '  - name: c',
    '    image: i1',
    '    image: i2',
    '  - name: d',
    '    ports: [{containerPort: 80}]',
    '',
  ].join('\n');
  const { value, duplicates } = parseYamlWithDuplicates(text);
  t.deepEqual(value, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'b', labels: { x: '2' } },
    spec: { containers: [{ name: 'c', image: 'i2' }, { name: 'd', ports: [{ containerPort: 80 }] }] },
  });
  t.deepEqual(duplicates, ['.metadata.name', '.metadata.labels.x', '.spec.containers[0].image']);
});

test('YAML: JSON bodies are valid YAML; core schema scalars', (t) => {
  t.deepEqual(parseYamlWithDuplicates('{"a": [1, 2.5, true, null, "s"]}').value, { a: [1, 2.5, true, null, 's'] });
  t.deepEqual(parseYamlWithDuplicates('a: yes\nb: "1"\nc: 1\nd: ~\n').value, { a: 'yes', b: '1', c: 1, d: null });
});

test('YAML: anchors, aliases and merge keys', (t) => {
  const text = 'base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n';
  const { value, duplicates } = parseYamlWithDuplicates(text);
  t.deepEqual(value, { base: { x: 1, y: 2 }, derived: { x: 1, y: 3 } });
  t.deepEqual(duplicates, []);
});

test('YAML: empty input is null; a trailing document marker is fine', (t) => {
  t.deepEqual(parseYamlWithDuplicates(''), { value: null, duplicates: [] });
  t.deepEqual(parseYamlWithDuplicates('# only a comment\n').value, null);
  t.deepEqual(parseYamlWithDuplicates('---\na: 1\n---\n').value, { a: 1 });
});

test('YAML: several documents are an error', (t) => {
  const e = syntaxError(t, () => parseYamlWithDuplicates('a: 1\n---\nb: 2\n'));
  t.regex(e.message, /single YAML document/);
  t.is(e.line, 3);
});

test('YAML: syntax errors carry a position', (t) => {
  const e = syntaxError(t, () => parseYamlWithDuplicates('a:\n  b: [1, 2\nc: 3\n'));
  t.regex(e.message, /^yaml: /);
  t.true(e.line >= 2);
  const tab = syntaxError(t, () => parseYamlWithDuplicates('a: "unterminated\n'));
  t.regex(tab.message, /^yaml: /);
});

test('YAML: values JSON cannot carry and alias bombs are rejected', (t) => {
  const inf = syntaxError(t, () => parseYamlWithDuplicates('spec:\n  ratio: .inf\n'));
  t.regex(inf.message, /\.spec\.ratio: \.inf cannot be represented in JSON/);
  t.is(inf.line, 2);
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 0; i < 8; i++) {
    const prev = String.fromCharCode(97 + i);
    const next = String.fromCharCode(98 + i);
    lines.push(`${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
  }
  const bomb = syntaxError(t, () => parseYamlWithDuplicates(lines.join('\n')));
  t.regex(bomb.message, /^yaml: /);
});
