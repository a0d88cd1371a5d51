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
