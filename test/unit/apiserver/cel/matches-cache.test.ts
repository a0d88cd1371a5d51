/** matches() with its patterns compiled once: the same answers and errors as CEL's own, still charged to the meter. */
import test from 'ava';
import { CelEnvironment } from '../../../../apiserver/cel/program';
import { CostMeter } from '../../../../apiserver/cel/cost';

const env = new CelEnvironment({ variables: ['s'] });

test('a pattern answers the same every time, in method and function form', (t) => {
  const method = env.compile("s.matches('^[a-z0-9-]+$')");
  const fn = env.compile("matches(s, '^[a-z0-9-]+$')");
  for (const [s, want] of [['web-1', true], ['Web', false], ['web-2', true], ['a_b', false]] as const) {
    t.is(method.evaluate({ s }), want, s);
    t.is(fn.evaluate({ s }), want, s);
  }
});

test('an invalid pattern is CEL\'s error; the cost is charged as before', (t) => {
  t.throws(() => env.compile("s.matches('(')").evaluate({ s: 'x' }), { message: /missing closing \)/ });
  const meter = new CostMeter(1_000_000);
  env.compile("s.matches('^a+$')").evaluate({ s: 'a'.repeat(1000) }, meter);
  // 1 + ceil(0.25 × 4) × ceil(0.1 × 1000), plus the variable read.
  t.true(meter.total >= 101, String(meter.total));
});
