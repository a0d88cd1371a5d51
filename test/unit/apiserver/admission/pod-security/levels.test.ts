import test from 'ava';
import { LATEST, levelVersionString, parseVersion, policyFromLabels, type Policy } from '../../../../../apiserver/admission/pod-security/levels';

const privileged: Policy = { enforce: { level: 'privileged', version: LATEST }, audit: { level: 'privileged', version: LATEST }, warn: { level: 'privileged', version: LATEST } };

test('versions are latest or v1.<minor> without leading zeros, with upstream\'s message otherwise', (t) => {
  t.deepEqual(parseVersion('latest'), LATEST);
  t.deepEqual(parseVersion('v1.25'), { latest: false, minor: 25 });
  t.deepEqual(parseVersion('v1.0'), { latest: false, minor: 0 });
  for (const bad of ['v1.05', 'v2.1', '1.25', 'v1.', 'Latest']) t.deepEqual(parseVersion(bad), { error: 'must be "latest" or "v1.x"' }, bad);
});

test('warn follows a stricter enforce level (and its version) when warn is not set, as upstream', (t) => {
  const { policy, errors } = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.30' }, privileged);
  t.deepEqual(errors, []);
  t.is(levelVersionString(policy.enforce), 'baseline:v1.30');
  t.is(levelVersionString(policy.warn), 'baseline:v1.30');
  t.is(levelVersionString(policy.audit), 'privileged:latest');
  const explicitWarn = policyFromLabels({ 'pod-security.svc.io/enforce': 'baseline', 'pod-security.svc.io/warn': 'privileged' }, privileged).policy;
  t.is(explicitWarn.warn.level, 'privileged');
});

test('either label spelling works; both spellings with different values are an error naming both', (t) => {
  t.is(policyFromLabels({ 'pod-security.svc.io/enforce': 'restricted' }, privileged).policy.enforce.level, 'restricted');
  t.is(policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.svc.io/enforce': 'restricted' }, privileged).errors.length, 0);
  const { errors } = policyFromLabels({ 'pod-security.svc.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce': 'baseline' }, privileged);
  t.deepEqual(errors, [{ field: 'metadata.labels[pod-security.kubernetes.io/enforce]', value: 'baseline', detail: 'must equal pod-security.svc.io/enforce ("restricted") when both are set' }]);
});

test('an unreadable enforce level fails closed (restricted); audit and warn fail open (privileged); a bad version reads as latest', (t) => {
  const { policy, errors } = policyFromLabels(
    { 'pod-security.kubernetes.io/enforce': 'strict', 'pod-security.kubernetes.io/audit': 'nope', 'pod-security.kubernetes.io/warn': 'x', 'pod-security.kubernetes.io/enforce-version': 'v9' },
    privileged,
  );
  t.is(policy.enforce.level, 'restricted');
  t.deepEqual(policy.enforce.version, LATEST);
  t.is(policy.audit.level, 'privileged');
  t.is(policy.warn.level, 'privileged');
  t.deepEqual(
    errors.map((e) => `${e.field}: ${e.detail}`),
    [
      'metadata.labels[pod-security.kubernetes.io/enforce]: must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/enforce-version]: must be "latest" or "v1.x"',
      'metadata.labels[pod-security.kubernetes.io/audit]: must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn]: must be one of privileged, baseline, restricted',
    ],
  );
});

test('no labels: the defaults', (t) => {
  const defaults: Policy = { ...privileged, enforce: { level: 'baseline', version: LATEST } };
  t.deepEqual(policyFromLabels(undefined, defaults).policy, defaults);
  t.deepEqual(policyFromLabels({ app: 'x' }, defaults).policy, defaults);
});
