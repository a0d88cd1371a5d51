import test from 'ava';
import fc from 'fast-check';
import {
  bothKeys,
  canonicalApiVersion,
  canonicalGroup,
  canonicalKey,
  sameApiVersion,
  sameGroup,
  sameKey,
  upstreamGroup,
  upstreamKey,
} from '../../../../apiserver/api/group-names';

test('each X.svc.io group is X.k8s.io upstream; groups without a domain have one name', (t) => {
  for (const [svc, k8s] of [
    ['rbac.authorization.svc.io', 'rbac.authorization.k8s.io'],
    ['coordination.svc.io', 'coordination.k8s.io'],
    ['events.svc.io', 'events.k8s.io'],
    ['certificates.svc.io', 'certificates.k8s.io'],
    ['authentication.svc.io', 'authentication.k8s.io'],
    ['authorization.svc.io', 'authorization.k8s.io'],
    ['networking.svc.io', 'networking.k8s.io'],
    ['meta.svc.io', 'meta.k8s.io'],
    ['flowcontrol.apiserver.svc.io', 'flowcontrol.apiserver.k8s.io'],
  ]) {
    t.is(upstreamGroup(svc), k8s);
    t.is(canonicalGroup(k8s), svc);
    t.is(canonicalGroup(svc), svc);
    t.true(sameGroup(svc, k8s));
    t.true(sameGroup(k8s, svc));
  }
  for (const g of ['', 'apps', 'batch', 'policy', 'autoscaling', 'example.com']) {
    t.is(upstreamGroup(g), undefined);
    t.is(canonicalGroup(g), g);
  }
  t.false(sameGroup('rbac.authorization.k8s.io', 'authorization.svc.io'));
  t.false(sameGroup('policy', 'policy.svc.io'));
  // Only the exact domain: a group that merely ends in the letters is another group.
  t.is(canonicalGroup('notk8s.io'), 'notk8s.io');
  t.is(upstreamGroup('mysvc.io'), undefined);
});

test('apiVersions compare by canonical group, the core group and versions unchanged', (t) => {
  t.is(canonicalApiVersion('rbac.authorization.k8s.io/v1'), 'rbac.authorization.svc.io/v1');
  t.is(canonicalApiVersion('v1'), 'v1');
  t.is(canonicalApiVersion('apps/v1'), 'apps/v1');
  t.true(sameApiVersion('events.k8s.io/v1', 'events.svc.io/v1'));
  t.false(sameApiVersion('events.k8s.io/v1beta1', 'events.svc.io/v1'));
  t.false(sameApiVersion(1, 'v1'));
  t.false(sameApiVersion(undefined, 'v1'));
});

test('label, annotation and taint keys: kubernetes.io (and k8s.io) spell svc.io keys', (t) => {
  for (const [svc, up] of [
    ['svc.io/hostname', 'kubernetes.io/hostname'],
    ['svc.io/os', 'kubernetes.io/os'],
    ['node.svc.io/not-ready', 'node.kubernetes.io/not-ready'],
    ['node.svc.io/unreachable', 'node.kubernetes.io/unreachable'],
    ['failure-domain.beta.svc.io/zone', 'failure-domain.beta.kubernetes.io/zone'],
    ['svc.io/config.mirror', 'kubernetes.io/config.mirror'],
  ]) {
    t.is(upstreamKey(svc), up);
    t.is(canonicalKey(up), svc);
    t.true(sameKey(svc, up));
    t.deepEqual(bothKeys(up), [svc, up]);
  }
  t.is(canonicalKey('k8s.io/initial-events-end'), 'svc.io/initial-events-end');
  for (const k of ['dedicated', 'example.com/gpu', 'notkubernetes.io/x', 'app']) {
    t.is(canonicalKey(k), k);
    t.is(upstreamKey(k), undefined);
    t.deepEqual(bothKeys(k), [k]);
  }
  t.false(sameKey('node.kubernetes.io/not-ready', 'node.svc.io/unreachable'));
});

test('property: the mappings are inverse on DNS-like names, and same* is an equivalence of the two spellings', (t) => {
  const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
  const domain = fc.array(label, { minLength: 1, maxLength: 3 }).map((ls) => ls.join('.'));
  fc.assert(
    fc.property(domain, (d) => {
      const g = `${d}.svc.io`;
      const up = upstreamGroup(g)!;
      return canonicalGroup(up) === g && sameGroup(g, up) && sameGroup(up, g) && upstreamGroup(canonicalGroup(up)) === up;
    }),
  );
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.option(domain, { nil: undefined }), label, (d, name) => {
      const key = d ? `${d}.svc.io/${name}` : `svc.io/${name}`;
      const up = upstreamKey(key)!;
      return canonicalKey(up) === key && sameKey(key, up) && canonicalKey(key) === key;
    }),
  ),
  );
});
