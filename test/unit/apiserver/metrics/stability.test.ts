/** Metric stability levels in HELP, deprecation, hiding after the lifetime, and --show-hidden-metrics-for-version. */
import test from 'ava';
import { ApiMetrics } from '../../../../apiserver/metrics/registry';
import { isHidden, parseShowHiddenMetrics, stabilityHelp } from '../../../../apiserver/metrics/stability';

test('HELP carries the stability level, and a deprecated metric its release, as upstream renders them', async (t) => {
  t.is(stabilityHelp({ stability: 'STABLE' }, 'Requests.'), '[STABLE] Requests.');
  t.is(stabilityHelp({ stability: 'ALPHA', deprecatedVersion: '1.31' }, 'Old.'), '[ALPHA] (Deprecated since 1.31.0) Old.');
  const text = await new ApiMetrics().metricsText();
  t.regex(text, /# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/);
  t.regex(text, /# HELP etcd_request_duration_seconds \[ALPHA\] Store request latency/);
});

test('hidden once the lifetime after deprecation is over: STABLE 3 releases, BETA 1, ALPHA from the next release', (t) => {
  const at = { major: 1, minor: 33 };
  t.false(isHidden({ stability: 'STABLE' }, at));
  t.false(isHidden({ stability: 'STABLE', deprecatedVersion: '1.31' }, at));
  t.true(isHidden({ stability: 'STABLE', deprecatedVersion: '1.30' }, at));
  t.false(isHidden({ stability: 'BETA', deprecatedVersion: '1.33' }, at));
  t.true(isHidden({ stability: 'BETA', deprecatedVersion: '1.32' }, at));
  t.false(isHidden({ stability: 'ALPHA', deprecatedVersion: '1.33' }, at));
  t.true(isHidden({ stability: 'ALPHA', deprecatedVersion: '1.32' }, at));
});

test('a hidden metric is not exported unless shown; a deprecated one still shown warns', (t) => {
  const warned: string[] = [];
  const plain = new ApiMetrics({ warn: (m) => warned.push(m) });
  plain.declare('svc_test_hidden_total', { stability: 'ALPHA', deprecatedVersion: '1.30' }, 'Gone.');
  plain.declare('svc_test_deprecated_total', { stability: 'STABLE', deprecatedVersion: '1.32' }, 'Going.');
  t.deepEqual(plain.declare('svc_test_hidden_total', { stability: 'ALPHA', deprecatedVersion: '1.30' }, 'Gone.').registers, []);
  t.deepEqual(warned, ['svc_test_deprecated_total is deprecated since 1.32']);
  const shown = new ApiMetrics({ showHiddenMetrics: true });
  t.deepEqual(shown.declare('svc_test_hidden_total', { stability: 'ALPHA', deprecatedVersion: '1.30' }, 'Gone.').registers, [shown.registry]);
});

test('--show-hidden-metrics-for-version takes only the previous minor release (upstream\'s message)', (t) => {
  t.deepEqual(parseShowHiddenMetrics(''), { show: false });
  t.deepEqual(parseShowHiddenMetrics('1.32'), { show: true });
  const message = "--show-hidden-metrics-for-version must be omitted or have the value '1.32'. Only the previous minor version is allowed";
  for (const bad of ['1.31', '1.33', 'x', '1.32.0']) t.deepEqual(parseShowHiddenMetrics(bad), { error: message });
});
