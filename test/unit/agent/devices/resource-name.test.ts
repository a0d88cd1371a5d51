import test from 'ava';
import { extendedResourceNameProblem, isExtendedResourceName } from '../../../../agent/devices/resource-name';

test('valid extended resource names', (t) => {
  for (const n of ['example.com/foo', 'nvidia.com/gpu', 'a.b-c.io/dev_1.x', 'example.com/F00']) t.true(isExtendedResourceName(n), n);
});

test('invalid names say why', (t) => {
  t.regex(extendedResourceNameProblem('foo')!, /domain-prefixed/);
  t.regex(extendedResourceNameProblem('kubernetes.io/foo')!, /reserved domain/);
  t.regex(extendedResourceNameProblem('foo.kubernetes.io/foo')!, /reserved domain/);
  t.regex(extendedResourceNameProblem('svc.io/foo')!, /reserved domain/);
  t.regex(extendedResourceNameProblem('requests.example.com/foo')!, /requests\./);
  for (const n of ['Example.com/foo', 'example.com/', 'example.com/-x', 'example.com/a/b', `example.com/${'x'.repeat(64)}`, '/foo', 'exa mple.com/foo']) {
    t.false(isExtendedResourceName(n), n);
  }
});
