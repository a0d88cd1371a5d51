import test from 'ava';
import { CelCompileError, CelEnvironment, CelEvalError } from '../../../../apiserver/cel/program';
import { callCost, CostMeter, LIST_LITERAL_COST } from '../../../../apiserver/cel/cost';

const env = new CelEnvironment({ variables: ['claims', 'user'] });
const claims = { sub: 'u1', email: 'Ann@Example.com', email_verified: true, groups: ['dev', 'ops'], n: 5, nested: { team: 'core' } };
const user = { username: 'alice', uid: '1', groups: ['a', 'system:masters'], extra: { 'acme.io/k': ['v'] } };
const ev = (src: string, vars: Record<string, unknown> = { claims, user }) => env.compile(src).evaluate(vars);

test('the expressions authentication needs evaluate as CEL defines them', (t) => {
  t.is(ev('claims.email'), 'Ann@Example.com');
  t.deepEqual(ev('claims.groups'), ['dev', 'ops']);
  t.true(ev('has(claims.email)'));
  t.false(ev('has(claims.missing)'));
  t.is(ev("has(claims.missing) ? claims.missing : 'none'"), 'none');
  t.is(ev("'oidc:' + claims.sub"), 'oidc:u1');
  t.deepEqual(ev("claims.groups.map(g, 'p:' + g)"), ['p:dev', 'p:ops']);
  t.deepEqual(ev("claims.groups.filter(g, g != 'dev')"), ['ops']);
  t.true(ev("claims.groups.exists(g, g == 'ops')"));
  t.true(ev('claims.groups.all(g, g.size() == 3)'));
  t.true(ev("claims.groups.exists_one(g, g.startsWith('d'))"));
  t.true(ev("'dev' in claims.groups"));
  t.is(ev('size(claims.groups)'), 2);
  t.is(ev('claims.email.lowerAscii()'), 'ann@example.com');
  t.deepEqual(ev("claims.email.split('@')"), ['Ann', 'Example.com']);
  t.is(ev("claims.groups.join(',')"), 'dev,ops');
  t.true(ev("claims.email.endsWith('.com') && claims.email.contains('@')"));
  t.true(ev("claims.email.matches('^[A-Za-z]+@')"));
  t.is(ev("claims.email.replace('Example', 'x')"), 'Ann@x.com');
  t.is(ev('claims.email_verified ? claims.email : ""'), 'Ann@Example.com');
  t.is(ev('claims.nested.team'), 'core');
  t.is(ev('int(claims.n) + 1'), 6);
  t.deepEqual(ev("{'a': claims.sub}"), { a: 'u1' });
  t.true(ev("!user.username.startsWith('system:')"));
  t.false(ev("user.groups.all(g, !g.startsWith('system:'))"));
  t.is(ev("user.extra['acme.io/k'][0]"), 'v');
});

test('evaluation errors (a missing key, no matching overload) are CelEvalErrors', (t) => {
  const e = t.throws(() => ev('claims.missing'), { instanceOf: CelEvalError });
  t.regex(e.message, /missing/);
  t.false(e.costExceeded);
  t.throws(() => ev("claims.n + 'x'"), { instanceOf: CelEvalError });
});

test('compile refuses syntax errors, undeclared variables and unknown functions', (t) => {
  t.throws(() => env.compile('claims.email +'), { instanceOf: CelCompileError });
  t.throws(() => env.compile('claim.email'), { instanceOf: CelCompileError, message: /undeclared reference to 'claim'/ });
  t.throws(() => env.compile('claims.email.frobnicate()'), { instanceOf: CelCompileError, message: /undeclared reference to 'frobnicate'/ });
  t.throws(() => env.compile('x.map(y, y)'), { message: /'x'/ });
  // Comprehension variables are in scope inside their macro only.
  t.notThrows(() => env.compile('claims.groups.map(g, g + "x")'));
  t.throws(() => env.compile('claims.groups.map(g, g) + [g]'), { message: /'g'/ });
  t.deepEqual([...env.compile('claims.email + user.username').variables].sort(), ['claims', 'user']);
});

test('cost: calls and iterations are charged; list literals cost 40', (t) => {
  const m = new CostMeter();
  env.compile('[1, 2, 3].size()').evaluate({}, m);
  t.true(m.total >= LIST_LITERAL_COST && m.total < LIST_LITERAL_COST + 5);
  const m2 = new CostMeter();
  env.compile('claims.l.all(x, x > 0)').evaluate({ claims: { l: Array.from({ length: 100 }, (_, i) => i + 1) } }, m2);
  t.true(m2.total >= 100, `cost ${m2.total}`);
  // The lists map() builds internally are not list literals.
  const m3 = new CostMeter();
  env.compile('claims.l.map(x, x)').evaluate({ claims: { l: [1, 2, 3] } }, m3);
  t.true(m3.total < LIST_LITERAL_COST, `cost ${m3.total}`);
  // Regex: pattern length times input length.
  t.true(callCost('matches', 'a'.repeat(1000), ['b'.repeat(100)]) > callCost('matches', 'a'.repeat(10), ['b']) * 100);
});

test('an expression over its budget stops with a cost error', (t) => {
  const p = env.compile('claims.l.all(a, claims.l.all(b, a != b || a == b))');
  const l = Array.from({ length: 100 }, (_, i) => String(i));
  const e = t.throws(() => p.evaluate({ claims: { l } }, new CostMeter(1000)), { instanceOf: CelEvalError });
  t.true(e.costExceeded);
  t.regex(e.message, /cost limit exceeded/);
  // Within budget the same program succeeds.
  t.true(p.evaluate({ claims: { l: ['1', '2'] } }, new CostMeter(1000)));
  // A cost error is not swallowed by a logical or.
  const q = env.compile("claims.l.all(a, claims.l.all(b, a != b || a == b)) || true");
  t.throws(() => q.evaluate({ claims: { l } }, new CostMeter(1000)), { instanceOf: CelEvalError });
});

test('a meter shared across evaluations enforces a total budget', (t) => {
  const p = env.compile('claims.l.exists(x, x == 99)');
  const l = Array.from({ length: 100 }, (_, i) => i);
  const once = new CostMeter();
  p.evaluate({ claims: { l } }, once);
  const total = new CostMeter(once.total * 2.5);
  p.evaluate({ claims: { l } }, total);
  p.evaluate({ claims: { l } }, total);
  t.throws(() => p.evaluate({ claims: { l } }, total), { instanceOf: CelEvalError });
});
