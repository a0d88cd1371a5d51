/**
 * Property-based tests (fast-check) of the label and field selector parsers and of matching:
 * any text either parses to requirements that are valid by upstream's rules or is a 400 ApiError
 * (never another error); valid selectors survive rendering with any spacing and spelling; and
 * matching obeys the laws of upstream's Requirement.Matches. Runs are bounded by count.
 */
import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import { labelValueErrors, qualifiedNameErrors } from '../../../../apiserver/api/name-validation';
import { matches, parseFieldSelector, parseFieldTerms, parseLabelSelector, type Requirement } from '../../../../apiserver/api/selectors';
import { parseFieldRequirements } from '../../../../apiserver/authz/attributes';

/** Outcome of a parse: the requirements, or the 400's message; anything else fails the property. */
function outcome<T>(fn: () => T): { ok: T } | { bad: string } {
  try {
    return { ok: fn() };
  } catch (err) {
    if (err instanceof ApiError && err.code === 400) return { bad: err.message };
    throw err;
  }
}

/** The characters the label grammar gives meaning to, plus letters of keywords and keys, and some that must be refused. */
const labelSoup = fc.string({
  unit: fc.constantFrom('a', 'b', 'i', 'n', 'o', 't', '1', '9', '-', '.', '_', '/', '=', '!', '(', ')', ',', '<', '>', ' ', '\t', '\n', '\u00a0', '\0', 'é'),
  maxLength: 40,
});
const anyText = fc.string({ unit: 'binary', maxLength: 40 });

const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/);
const key = fc
  .tuple(fc.option(fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((ls) => ls.join('.'))), fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?$/))
  .map(([prefix, name]) => (prefix ? `${prefix}/${name}` : name));
const value = fc.stringMatching(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?$/);
const smallInt = fc.integer({ min: -20, max: 20 });

/** A valid requirement as the parser returns it (sets sorted and de-duplicated, as upstream's string set). */
const requirement: fc.Arbitrary<Requirement> = fc.oneof(
  fc.record({ key, operator: fc.constantFrom('=' as const, '!=' as const), values: value.map((v) => [v]) }),
  fc.record({ key, operator: fc.constantFrom('In' as const, 'NotIn' as const), values: fc.array(value, { minLength: 1, maxLength: 4 }).map((vs) => [...new Set(vs)].sort()) }),
  fc.record({ key, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const), values: fc.constant([] as string[]) }),
  // Label values cannot start with '-', so only non-negative integers can be written after > and <.
  fc.record({ key, operator: fc.constantFrom('Gt' as const, 'Lt' as const), values: fc.nat({ max: 20 }).map((n) => [String(n)]) }),
);

const space = fc.stringMatching(/^[ \t\r\n]{0,2}$/);

/** Writes a requirement the way a client might: any spacing, == or =, set members repeated and in any order. */
function render(r: Requirement): fc.Arbitrary<string> {
  const named = r.values.filter((v) => v !== '');
  return fc.tuple(space, space, space, fc.boolean(), fc.shuffledSubarray([...named, ...named], { minLength: named.length * 2 })).map(([a, b, c, double, shuffled]) => {
    // The empty value is written as a leading comma, or as "()" / "(,)" alone. (Upstream refuses an
    // even run of commas before ")", such as "(x,,)"; the parser does too.)
    const members = r.values.includes('') ? (shuffled.length > 0 ? ['', ...shuffled] : double ? ['', ''] : []) : shuffled;
    switch (r.operator) {
      case '=':
        return `${a}${r.key}${b}${double ? '==' : '='}${c}${r.values[0]}${a}`;
      case '!=':
        return `${a}${r.key}${b}!=${c}${r.values[0]}${a}`;
      case 'Gt':
      case 'Lt':
        return `${a}${r.key}${b}${r.operator === 'Gt' ? '>' : '<'}${c}${r.values[0]}`;
      case 'In':
      case 'NotIn':
        // "( )" and "(,)" are the set holding only the empty value.
        return `${a}${r.key} ${b}${r.operator === 'In' ? 'in' : 'notin'}${c}(${b}${members.join(`${c},${a}`)}${b})${c}`;
      case 'Exists':
        return `${a}${r.key}${b}`;
      case 'DoesNotExist':
        return `${a}!${b}${r.key}${c}`;
    }
  });
}

const selector = fc.array(requirement, { minLength: 1, maxLength: 4 }).chain((reqs) => fc.tuple(fc.constant(reqs), fc.tuple(...reqs.map(render)).map((parts) => parts.join(','))));

/** upstream's Requirement.Matches, written out independently of the code under test. */
function reference(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case '=':
    case 'In':
      return has && r.values.includes(v);
    case '!=':
    case 'NotIn':
      return !has || !r.values.includes(v);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt':
      if (!has || !/^[+-]?\d+$/.test(v)) return false;
      return r.operator === 'Gt' ? BigInt(v) > BigInt(r.values[0]) : BigInt(v) < BigInt(r.values[0]);
  }
}

test('any text is either a valid label selector or a 400 naming labelSelector', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.oneof(labelSoup, anyText), (text) => {
      const o = outcome(() => parseLabelSelector(text));
      if ('bad' in o) return o.bad.startsWith('labelSelector: Invalid value: ');
      return o.ok.every((r) => qualifiedNameErrors(r.key).length === 0 && r.values.every((v) => labelValueErrors(v).length === 0));
    }),
    { numRuns: 3000 },
  ),
  );
});

test('valid label selectors parse back to their requirements however they are spaced and spelled', (t) => {
  fc.assert(
    fc.property(selector, ([reqs, text]) => {
      t.deepEqual(parseLabelSelector(text), reqs, text);
    }),
    { numRuns: 500 },
  );
});

test('matching follows upstream Requirement.Matches and its laws', (t) => {
  const labels = fc.dictionary(fc.constantFrom('a', 'b', 'x.io/c'), fc.oneof(value, smallInt.map(String)), { maxKeys: 3 });
  const req = fc.oneof(
    requirement,
    fc.record({ key: fc.constantFrom('a', 'b', 'x.io/c'), operator: fc.constantFrom('=' as const, 'In' as const, 'NotIn' as const, '!=' as const), values: fc.array(value, { minLength: 1, maxLength: 2 }) }),
    fc.record({ key: fc.constantFrom('a', 'b'), operator: fc.constantFrom('Gt' as const, 'Lt' as const), values: fc.nat({ max: 10 }).map((n) => [String(n)]) }),
  );
  fc.assert(
    fc.property(fc.array(req, { maxLength: 3 }), labels, (reqs, ls) => {
      const get = (k: string) => (Object.prototype.hasOwnProperty.call(ls, k) ? ls[k] : undefined);
      // A selector is the conjunction of its requirements, each as upstream evaluates it.
      t.is(matches(reqs, get), reqs.every((r) => reference(r, ls)));
      for (const r of reqs) {
        const flip = { '=': '!=', '!=': '=', In: 'NotIn', NotIn: 'In', Exists: 'DoesNotExist', DoesNotExist: 'Exists' } as const;
        if (r.operator !== 'Gt' && r.operator !== 'Lt') t.is(matches([{ ...r, operator: flip[r.operator] }], get), !matches([r], get), JSON.stringify(r));
      }
    }),
    { numRuns: 1000 },
  );
});

const fieldSoup = fc.string({ unit: fc.constantFrom('m', 'e', 't', 'a', '.', 'n', '=', '!', ',', '\\', ' ', 'x', '\0'), maxLength: 30 });

test('any text is either a field selector or a 400; authorization reads it exactly as the handler does', (t) => {
  const allowed = new Set(['metadata.name', 'metadata.namespace', 'a', 'ma']);
  fc.assert(
    fc.property(fc.oneof(fieldSoup, anyText), (text) => {
      const handler = outcome(() => parseFieldSelector(text, allowed));
      const terms = outcome(() => parseFieldTerms(text));
      const attrs = parseFieldRequirements(text);
      if ('ok' in terms) {
        t.deepEqual(attrs ?? [], terms.ok.map((r) => ({ key: r.key, operator: r.operator === '!=' ? 'NotIn' : 'In', values: r.values })));
        if ('ok' in handler) t.deepEqual(handler.ok, terms.ok);
        else t.true(handler.bad.startsWith('field label not supported: '), handler.bad);
      } else {
        t.is(attrs, undefined, text);
        t.true('bad' in handler);
      }
    }),
    { numRuns: 2000 },
  );
});

test('any field value survives escaping and parsing', (t) => {
  const escape = (v: string) => v.replace(/[\\,=]/g, (c) => `\\${c}`);
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('metadata.name', 'metadata.namespace'), fc.boolean(), anyText), { minLength: 1, maxLength: 3 }), (terms) => {
      const text = terms.map(([k, not, v]) => `${k}${not ? '!=' : '='}${escape(v)}`).join(',');
      const got = parseFieldSelector(text, new Set(['metadata.name', 'metadata.namespace']));
      t.deepEqual(
        got,
        terms.map(([k, not, v]) => ({ key: k, operator: not ? '!=' : '=', values: [v] })),
      );
    }),
    { numRuns: 500 },
  );
});
