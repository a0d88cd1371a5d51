import test from 'ava';
import { parseFieldSelector } from '../../../../apiserver/api/selectors';
import { parseFieldRequirements, parseLabelRequirements } from '../../../../apiserver/authz/attributes';

test('field selector attributes are parsed exactly as the handler parses them (no trimming)', (t) => {
  const allowed = new Set(['spec.nodeName', 'metadata.name']);
  for (const text of ['spec.nodeName=n1', 'spec.nodeName= n1', 'spec.nodeName=n1 ', 'metadata.name!=a\\,b,spec.nodeName==n1']) {
    const handler = parseFieldSelector(text, allowed);
    const attrs = parseFieldRequirements(text);
    t.deepEqual(
      attrs,
      handler.map((r) => ({ key: r.key, operator: r.operator === '!=' ? 'NotIn' : 'In', values: r.values })),
      text,
    );
  }
  // Before: trimmed to n1 here while the handler read " n1".
  t.deepEqual(parseFieldRequirements('spec.nodeName= n1'), [{ key: 'spec.nodeName', operator: 'In', values: [' n1'] }]);
  for (const bad of ['spec.nodeName', 'spec.nodeName=a=b', 'spec.nodeName=\\q', '   ']) t.is(parseFieldRequirements(bad), undefined, bad);
});

test('label selector attributes leave out Gt and Lt, which SubjectAccessReview cannot express', (t) => {
  t.deepEqual(parseLabelRequirements('a=b,n>3,!c'), [
    { key: 'a', operator: 'In', values: ['b'] },
    { key: 'c', operator: 'DoesNotExist', values: [] },
  ]);
  t.is(parseLabelRequirements('a in (x'), undefined);
});
