import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { matches, parseFieldSelector, parseLabelSelector } from '../../../../apiserver/api/selectors';

const labels = { app: 'web', tier: 'front', 'svc.io/role': 'x' };
const get = (k: string) => (labels as Record<string, string>)[k];

test('label selector operators', (t) => {
  t.true(matches(parseLabelSelector('app=web'), get));
  t.true(matches(parseLabelSelector('app==web,tier!=back'), get));
  t.false(matches(parseLabelSelector('app!=web'), get));
  t.true(matches(parseLabelSelector('tier in (front, back)'), get));
  t.false(matches(parseLabelSelector('tier notin (front)'), get));
  t.true(matches(parseLabelSelector('svc.io/role'), get));
  t.true(matches(parseLabelSelector('!missing'), get));
  t.false(matches(parseLabelSelector('!app'), get));
  t.true(matches(parseLabelSelector(''), get));
  t.true(matches(parseLabelSelector('missing!=x'), get), '!= matches an absent label, as upstream');
});

test('bad label selectors are 400s', (t) => {
  for (const bad of ['app=', 'in (x)', 'a b', 'app=web,', 'Bad Key=1']) {
    if (bad === 'app=') continue; // empty value is valid upstream
    const e = t.throws(() => parseLabelSelector(bad), { instanceOf: ApiError });
    t.is(e?.code, 400, bad);
  }
  t.notThrows(() => parseLabelSelector('app='));
});

test('field selectors allow only known fields and =, ==, !=', (t) => {
  const allowed = new Set(['metadata.name', 'spec.nodeName']);
  const sel = parseFieldSelector('spec.nodeName=n1,metadata.name!=x', allowed);
  t.true(matches(sel, (k) => ({ 'spec.nodeName': 'n1', 'metadata.name': 'y' })[k]));
  t.false(matches(sel, (k) => ({ 'spec.nodeName': 'n2', 'metadata.name': 'y' })[k]));
  t.is(t.throws(() => parseFieldSelector('status.phase=Running', allowed), { instanceOf: ApiError })?.code, 400);
  t.deepEqual(parseFieldSelector('metadata.name=a\\,b', allowed)[0].values, ['a,b']);
});

const parse400 = (text: string) => {
  try {
    parseLabelSelector(text);
  } catch (err) {
    return err instanceof ApiError && err.code === 400 ? err.message : `not a 400: ${String(err)}`;
  }
  return undefined;
};

test('label selectors upstream accepts parse to its requirements', (t) => {
  const cases: Array<[string, Array<{ key: string; operator: string; values: string[] }>]> = [
    // apimachinery's parseValues: "()" is the set holding the empty value, not an empty set.
    ['a notin ()', [{ key: 'a', operator: 'NotIn', values: [''] }]],
    ['a in ()', [{ key: 'a', operator: 'In', values: [''] }]],
    // Empty members of a set are the empty value; the set is sorted and de-duplicated.
    ['a in (x,)', [{ key: 'a', operator: 'In', values: ['', 'x'] }]],
    ['a in (,x,,y,x)', [{ key: 'a', operator: 'In', values: ['', 'x', 'y'] }]],
    ['a in (y,x)', [{ key: 'a', operator: 'In', values: ['x', 'y'] }]],
    // Whitespace is space, tab, CR and LF, around any token; "in" needs no space before "(".
    ['\ta\n in(x)\r', [{ key: 'a', operator: 'In', values: ['x'] }]],
    ['a = b , !c', [{ key: 'a', operator: '=', values: ['b'] }, { key: 'c', operator: 'DoesNotExist', values: [] }]],
    // in and notin are words only where an operator is expected.
    ['in in (notin)', [{ key: 'in', operator: 'In', values: ['notin'] }]],
    ['a=in', [{ key: 'a', operator: '=', values: ['in'] }]],
    // An absent value is the empty value.
    ['a=,b!=', [{ key: 'a', operator: '=', values: [''] }, { key: 'b', operator: '!=', values: [''] }]],
    // Gt and Lt compare int64 values.
    ['a>5,b<10', [{ key: 'a', operator: 'Gt', values: ['5'] }, { key: 'b', operator: 'Lt', values: ['10'] }]],
    ['example.com/a-b_c.d', [{ key: 'example.com/a-b_c.d', operator: 'Exists', values: [] }]],
    ['   ', []],
  ];
  for (const [text, want] of cases) t.deepEqual(parseLabelSelector(text), want, text);
});

test('a notin () keeps every object except those whose label is the empty value, as upstream', (t) => {
  const sel = parseLabelSelector('a notin ()');
  t.true(matches(sel, () => undefined));
  t.true(matches(sel, (k) => ({ a: 'x' })[k]));
  t.false(matches(sel, (k) => ({ a: '' })[k]));
  t.true(matches(parseLabelSelector('a in ()'), (k) => ({ a: '' })[k]));
  t.false(matches(parseLabelSelector('a in ()'), (k) => ({ a: 'x' })[k]));
});

test('Gt and Lt need the label and compare as integers', (t) => {
  const get = (labels: Record<string, string>) => (k: string) => labels[k];
  t.true(matches(parseLabelSelector('n>9'), get({ n: '10' })), 'numeric, not string, comparison');
  t.false(matches(parseLabelSelector('n>9'), get({ n: '9' })));
  t.false(matches(parseLabelSelector('n>9'), get({})));
  t.false(matches(parseLabelSelector('n<9'), get({ n: 'x' })), 'a label that is no integer never matches');
  t.true(matches(parseLabelSelector('n<9223372036854775807'), get({ n: '9223372036854775806' })), 'int64 precision');
  t.false(matches(parseLabelSelector('n>9223372036854775806'), get({ n: '9223372036854775806' })));
});

test('label selectors upstream refuses are 400s', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['!a=b', /found '=', expected: ',' or 'end of string'/],
    ['a in (x', /found '', expected: ',' or '\)'/],
    ['a in x', /found 'x' expected: '\('/],
    ['a in (x y)', /found 'y', expected: ',' or '\)'/],
    ['a in ((x))', /found '\(', expected: ',', '\)' or identifier/],
    ['a in (x),', /expected: identifier after ','/],
    [',a', /found ',', expected: !, identifier, or 'end of string'/],
    ['a b', /found 'b', expected: in, notin, =, ==, !=, gt, lt/],
    ['a==b==c', /found '==', expected: ',' or 'end of string'/],
    ['a>=1', /found '=', expected: identifier/],
    ['a>x', /for 'Gt', 'Lt' operators, the value must be an integer/],
    ['a>99999999999999999999', /for 'Gt', 'Lt' operators, the value must be an integer/],
    ['!', /found '', expected: identifier/],
    ['a=b c', /found 'c', expected: ',' or 'end of string'/],
    // Keys are qualified names: a DNS subdomain prefix, a name part of at most 63 characters.
    ['a..b/c', /key: Invalid value: "a\.\.b\/c": prefix part a lowercase RFC 1123 subdomain/],
    ['/c', /prefix part must be non-empty/],
    ['a/b/c', /a qualified name must consist of/],
    [`${'k'.repeat(64)}=v`, /name part must be no more than 63 characters/],
    ['Bad\u00a0Key=1', /key: Invalid value/],
    // Values are label values.
    ['a=-x', /values\[0\]\[a\]: Invalid value: "-x": a valid label must be/],
    [`a in (x,${'v'.repeat(64)})`, /must be no more than 63 characters/],
    ['a in (-x,y_)', /^labelSelector: Invalid value: .*: unable to parse requirement: \[values\[0\]\[a\].*, values\[1\]\[a\]/],
    ['a\0=b', /NUL/],
  ];
  for (const [text, want] of cases) {
    const msg = parse400(text);
    t.truthy(msg, `${JSON.stringify(text)} should be refused`);
    t.regex(msg ?? '', want, JSON.stringify(text));
    t.regex(msg ?? '', /^labelSelector: Invalid value: /, 'the message names the parameter');
  }
});

test('field selectors follow fields.ParseSelector: no trimming, escapes checked, first operator splits', (t) => {
  const allowed = new Set(['metadata.name', 'spec.nodeName']);
  const one = (text: string) => parseFieldSelector(text, allowed);
  t.deepEqual(one('metadata.name==a'), [{ key: 'metadata.name', operator: '=', values: ['a'] }]);
  t.deepEqual(one('metadata.name=a\\=b\\\\c'), [{ key: 'metadata.name', operator: '=', values: ['a=b\\c'] }]);
  t.deepEqual(one('metadata.name= a '), [{ key: 'metadata.name', operator: '=', values: [' a '] }], 'the value is taken as written');
  t.deepEqual(one('metadata.name!=,,spec.nodeName='), [
    { key: 'metadata.name', operator: '!=', values: [''] },
    { key: 'spec.nodeName', operator: '=', values: [''] },
  ]);
  t.deepEqual(one(''), []);
  const refused: Array<[string, RegExp]> = [
    ['metadata.name =a', /^field label not supported: metadata.name $/],
    [' metadata.name=a', /^field label not supported: {2}metadata.name$/],
    ['metadata.name=a=b', /^invalid field selector: unescaped character in value: =$/],
    ['metadata.name=a\\x', /^invalid field selector: invalid escape sequence: \\x$/],
    ['metadata.name=a\\', /^invalid field selector: invalid escape sequence: \\$/],
    ['metadata.name', /^invalid selector: 'metadata.name'; can't understand 'metadata.name'$/],
    ['  ', /^invalid selector: ' {2}'; can't understand ' {2}'$/],
    ['metadata.name>a', /can't understand/],
  ];
  for (const [text, want] of refused) {
    const err = t.throws(() => one(text), { instanceOf: ApiError }, text);
    t.is(err?.code, 400, text);
    t.regex(err?.message ?? '', want, text);
  }
});

test('an even run of commas before ")" is refused, as upstream parseIdentifiersList does', (t) => {
  t.deepEqual(parseLabelSelector('a in (x,,,)')[0].values, ['', 'x']);
  t.deepEqual(parseLabelSelector('a in (,)')[0].values, ['']);
  for (const text of ['a in (x,,)', 'a in (,,)']) t.regex(parse400(text) ?? '', /found '\)', expected: ',', or identifier/, text);
});
