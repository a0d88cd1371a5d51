import test from 'ava';
import { isEnabled, parseRuntimeConfig, stabilityOf, unknownKeys, type RuntimeConfig } from '../../../../apiserver/config/runtime-config';

const cfg = (...pairs: string[]) => parseRuntimeConfig(pairs) as RuntimeConfig;

test('defaults: stable on, alpha off, betas on only when introduced before 1.22', (t) => {
  const none = cfg();
  t.true(isEnabled(none, 'apps', 'v1', 'deployments'));
  t.true(isEnabled(none, '', 'v1', 'pods'));
  t.false(isEnabled(none, 'authentication.svc.io', 'v1alpha1', 'selfsubjectreviews'));
  t.true(isEnabled(none, 'authentication.svc.io', 'v1beta1', 'tokenreviews'));
  t.false(isEnabled(none, 'admissionregistration.svc.io', 'v1beta1', 'mutatingadmissionpolicies'));
  t.deepEqual(['v1', 'v2beta3', 'v1alpha1', 'v10'].map(stabilityOf), ['ga', 'beta', 'alpha', 'ga']);
});

test('more specific keys win over broader ones, whatever their order; either group spelling', (t) => {
  const c = cfg('batch/v1=false', 'api/all=true', 'authentication.k8s.io/v1alpha1', 'batch/v1/cronjobs=true');
  t.false(isEnabled(c, 'batch', 'v1', 'jobs'));
  t.true(isEnabled(c, 'batch', 'v1', 'cronjobs'));
  t.true(isEnabled(c, 'authentication.svc.io', 'v1alpha1', 'selfsubjectreviews'));
  const alphaOnly = cfg('api/all=false', 'api/alpha=true', 'v1=true');
  t.false(isEnabled(alphaOnly, 'apps', 'v1', 'deployments'));
  t.true(isEnabled(alphaOnly, '', 'v1', 'pods'));
  t.true(isEnabled(alphaOnly, 'authentication.svc.io', 'v1alpha1', 'selfsubjectreviews'));
  t.true(isEnabled(cfg('api/legacy=false', 'api/v1/pods=true'), '', 'v1', 'pods'));
  t.false(isEnabled(cfg('api/legacy=false', 'api/v1/pods=true'), '', 'v1', 'configmaps'));
});

test('bad pairs and unknown group versions are reported', (t) => {
  t.deepEqual(parseRuntimeConfig(['batch/v1=maybe']), { error: 'invalid value "maybe" for batch/v1: must be true or false' });
  t.true('error' in parseRuntimeConfig(['a/b/c/d']));
  t.true('error' in parseRuntimeConfig(['/v1']));
  t.deepEqual(unknownKeys(cfg('batch/v9=true', 'api/all=false', 'apps.k8s.io/v1', 'rbac.authorization.k8s.io/v1'), new Set(['batch/v1', 'rbac.authorization.svc.io/v1'])), ['batch/v9', 'apps.k8s.io/v1']);
});
