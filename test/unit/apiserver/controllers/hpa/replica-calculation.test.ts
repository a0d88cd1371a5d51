/**
 * The HPA's replica calculation (controllers/hpa/replica-calculator.ts) and behaviour
 * normalisation (scaling-behavior.ts) with fake time, against upstream's rules: tolerance,
 * missing and unready pods, stabilisation windows, rate policies and selectPolicy.
 */
import test from 'ava';
import { milliOf, resourceReplicas, type PodInfo, type PodSample } from '../../../../../apiserver/controllers/hpa/replica-calculator';
import { scaleDownLimit, scaleUpLimit, ScalingHistory, type ScalingRules } from '../../../../../apiserver/controllers/hpa/scaling-behavior';

const NOW = Date.parse('2025-03-01T12:00:00Z');
const LONG_AGO = NOW - 3_600_000;

function pod(name: string, o: Partial<PodInfo> = {}): PodInfo {
  return { name, deleting: false, phase: 'Running', startTimeMs: LONG_AGO, ready: { status: 'True', lastTransitionMs: LONG_AGO + 10_000 }, requests: [{ container: 'app', milli: 100 }], ...o };
}

function samples(values: Record<string, number>): Map<string, PodSample> {
  return new Map(Object.entries(values).map(([k, v]) => [k, { milli: v, timestampMs: NOW - 1000, windowMs: 15_000 }]));
}

const cpu50 = { resource: 'cpu', kind: 'Utilization' as const, value: 50 };

test('milliOf: quantities in milli-units, rounded up', (t) => {
  t.is(milliOf('100m'), 100);
  t.is(milliOf('1'), 1000);
  t.is(milliOf('64Mi'), 64 * 1024 * 1024 * 1000);
  t.is(milliOf('1n'), 1);
  t.is(milliOf(undefined), undefined);
});

test('utilization: scale up to ceil(ratio × ready pods); within the tolerance nothing changes', (t) => {
  const pods = [pod('a'), pod('b')];
  // 200% of request against a 50% target: ratio 4, two pods → 8.
  const up = resourceReplicas(2, cpu50, pods, samples({ a: 200, b: 200 }), NOW);
  t.deepEqual([up.replicas, up.utilization, up.averageMilli], [8, 200, 200]);
  // 54% against 50%: ratio 1.08, within 0.1.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 54, b: 54 }), NOW).replicas, 2);
  // 56%: ratio 1.12, beyond it: ceil(1.12 × 2) = 3.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 56, b: 56 }), NOW).replicas, 3);
  // A tolerance of its own (HPAScalingRules.tolerance) is honoured.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 56, b: 56 }), NOW, 0.2).replicas, 2);
  // Scale down: 10% against 50% → ceil(0.2 × 2) = 1.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 10, b: 10 }), NOW).replicas, 1);
});

test('missing pods count as at the target on a scale-down and as idle on a scale-up; deleted and failed pods are ignored', (t) => {
  const pods = [pod('a'), pod('b'), pod('c'), pod('gone', { deleting: true }), pod('dead', { phase: 'Failed' })];
  // a, b at 10%: ratio 0.2; c missing counts as 100% → (10+10+100)/300 = 40% → ratio 0.8 → ceil(0.8 × 3) = 3.
  t.is(resourceReplicas(3, cpu50, pods, samples({ a: 10, b: 10, gone: 500, dead: 500 }), NOW).replicas, 3);
  // a, b at 100%: ratio 2; c missing counts as 0 → 200/300 = 66% → ratio 1.32 → ceil(1.32 × 3) = 4.
  t.is(resourceReplicas(3, cpu50, pods, samples({ a: 100, b: 100 }), NOW).replicas, 4);
});

test('cpu: unready pods count as idle on a scale-up; a ratio that flips keeps the count', (t) => {
  const fresh = pod('new', { startTimeMs: NOW - 20_000, ready: { status: 'False', lastTransitionMs: NOW - 20_000 } });
  const pods = [pod('a'), fresh];
  // a at 100% (ratio 2); the unready pod as 0 → 50% → ratio 1: within tolerance → stays 2.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 100, new: 300 }), NOW).replicas, 2);
  // a at 200% (ratio 4); unready as 0 → 100% → ratio 2 → ceil(2 × 2) = 4.
  t.is(resourceReplicas(2, cpu50, pods, samples({ a: 200, new: 300 }), NOW).replicas, 4);
  // A pod that just turned ready, read before a window passed since: still unready, so idle (not
  // its 1000%, which would make 11): (100 + 0) / 200 = 50%, on target.
  const justReady = pod('r', { startTimeMs: NOW - 60_000, ready: { status: 'True', lastTransitionMs: NOW - 5000 } });
  t.is(resourceReplicas(1, cpu50, [pod('a'), justReady], samples({ a: 100, r: 1000 }), NOW).replicas, 1);
  // Memory counts every running pod with usage.
  const mem = { resource: 'memory', kind: 'AverageValue' as const, value: 100 };
  t.is(resourceReplicas(2, mem, pods, samples({ a: 200, new: 200 }), NOW).replicas, 4);
});

test('errors as upstream: no metrics, no pods, missing request, nothing ready', (t) => {
  t.throws(() => resourceReplicas(1, cpu50, [pod('a')], new Map(), NOW), { message: 'unable to get metrics for resource cpu: no metrics returned from resource metrics API' });
  t.throws(() => resourceReplicas(1, cpu50, [], samples({ a: 1 }), NOW), { message: 'no pods returned by selector while calculating replica count' });
  t.throws(() => resourceReplicas(1, cpu50, [pod('a', { requests: [{ container: 'app', milli: undefined }] })], samples({ a: 1 }), NOW), { message: 'missing request for cpu in container app of Pod a' });
  t.throws(() => resourceReplicas(1, cpu50, [pod('a', { phase: 'Pending' })], samples({ a: 1 }), NOW), { message: 'did not receive metrics for targeted pods (pods might be unready)' });
});

const UP: ScalingRules = { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] };
const DOWN: ScalingRules = { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };

test('rate limits: Max picks the larger change, Min the smaller, Disabled none; events of the period count', (t) => {
  t.is(scaleUpLimit(1, [], [], UP, NOW), 5, '1 + 4 pods beats doubling');
  t.is(scaleUpLimit(10, [], [], UP, NOW), 20, 'doubling beats 4 pods');
  t.is(scaleUpLimit(10, [], [], { ...UP, selectPolicy: 'Min' }, NOW), 14);
  t.is(scaleUpLimit(10, [], [], { ...UP, selectPolicy: 'Disabled' }, NOW), 10);
  // 4 pods added 5 s ago: the period started at 6.
  t.is(scaleUpLimit(10, [{ value: 4, atMs: NOW - 5000 }], [], UP, NOW), 12);
  // ...but not 20 s ago.
  t.is(scaleUpLimit(10, [{ value: 4, atMs: NOW - 20_000 }], [], UP, NOW), 20);
  t.is(scaleDownLimit(10, [], [], DOWN, NOW), 0);
  t.is(scaleDownLimit(10, [], [], { ...DOWN, policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] }, NOW), 8);
});

test('normalize: scale-up is rate-limited with ScalingLimited; max bounds it; scale-down waits for the stabilisation window', (t) => {
  const h = new ScalingHistory();
  let now = NOW;
  const up = h.normalize('ns/h', 16, 1, 1, 10, UP, DOWN, now);
  t.is(up.replicas, 5);
  t.like(up.scalingLimited, { status: 'True', reason: 'ScaleUpLimit' });
  t.like(up.ableToScale, { status: 'True', reason: 'ReadyForNewScale' });
  h.recordScale('ns/h', 1, 5, now);
  now += 5000;
  // Within the same 15 s period the 4 pods just added use the policies up.
  t.like(h.normalize('ns/h', 40, 5, 1, 10, UP, DOWN, now), { replicas: 5, scalingLimited: { status: 'True', reason: 'ScaleUpLimit' } });
  now += 15_000;
  const capped = h.normalize('ns/h', 40, 5, 1, 10, UP, DOWN, now);
  t.is(capped.replicas, 10);
  t.like(capped.scalingLimited, { status: 'True', reason: 'TooManyReplicas' });
  h.recordScale('ns/h', 5, 10, now);
  // Load drops: the recommendation is 2, but the last 300 s recommended up to 40.
  now += 60_000;
  const held = h.normalize('ns/h', 2, 10, 1, 10, UP, DOWN, now);
  t.is(held.replicas, 10);
  t.like(held.ableToScale, { reason: 'ScaleDownStabilized' });
  // Once the window has passed, with the same recommendation all along, it goes down to 2.
  now += 300_000;
  const down = h.normalize('ns/h', 2, 10, 1, 10, UP, DOWN, now);
  t.is(down.replicas, 2);
  t.like(down.scalingLimited, { status: 'False', reason: 'DesiredWithinRange' });
  // minReplicas bounds a scale-down.
  t.like(h.normalize('ns/other', 1, 4, 3, 10, UP, { ...DOWN, stabilizationWindowSeconds: 0 }, now), { replicas: 3, scalingLimited: { status: 'True', reason: 'TooFewReplicas' } });
});
