/**
 * The HPA controller (controllers/hpa/hpa-controller.ts) over a real store and informers with a
 * fake clock and a fake metrics source: without usage it reports ScalingActive False
 * (FailedGetResourceMetric) and leaves the scale alone; with usage it scales the Deployment
 * through its scale declaration, with upstream's conditions, status and events; a target that
 * does not exist is FailedGetScale.
 */
import test from 'ava';
import type { EventRecorder } from '../../../../../common/events/recorder';
import type { KObject } from '../../../../../apiserver/api/types';
import { HpaController } from '../../../../../apiserver/controllers/hpa/hpa-controller';
import type { PodUsageSource } from '../../../../../apiserver/controllers/hpa/hpa-metrics';
import { FakeClock } from '../../../../helpers/fake-clock';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';

const NS = 'default';
const T0 = Date.parse('2025-03-01T12:00:00Z');
const LONG_AGO = '2025-03-01T10:00:00Z';

interface H {
  f: Fixture;
  clock: FakeClock;
  events: Array<{ type: string; reason: string; message: string }>;
  usage: Map<string, number>;
  hpa(name: string): Promise<KObject & { status?: Record<string, any> }>;
  replicas(name: string): Promise<number>;
  until(what: string, pred: () => Promise<boolean>): Promise<void>;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<H> {
  const f = await openFixture();
  const clock = new FakeClock(T0);
  const events: H['events'] = [];
  const recorder: EventRecorder = { event: (_r, type, reason, message) => void events.push({ type, reason, message }) };
  const usage = new Map<string, number>();
  const source: PodUsageSource = {
    pod: (_ns, name) => {
      const m = usage.get(name);
      return m === undefined ? undefined : { timestampMs: clock.now() - 1000, windowMs: 15_000, containers: [{ name: 'app', cpuNanoCores: m * 1e6, memoryBytes: 1024 }] };
    },
  };
  const c = new HpaController(f.store, f.cache, f.registry, { log: f.log, clock, recorder, usage: source, syncPeriodMs: 15_000 });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return {
    f,
    clock,
    events,
    usage,
    hpa: (name) => f.store.get(f.type('autoscaling', 'v2', 'horizontalpodautoscalers'), NS, name),
    replicas: async (name) => ((await f.store.get(f.type('apps', 'v1', 'deployments'), NS, name)).spec as { replicas: number }).replicas,
    async until(what, pred) {
      for (let i = 0; i < 400; i++) {
        if (await pred()) return;
        await clock.advance(10);
        await new Promise((r) => setTimeout(r, 2));
      }
      throw new Error(`never: ${what}`);
    },
  };
}

async function deployment(h: H, name: string, replicas: number): Promise<void> {
  const template = { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '100m' } } }] } };
  await h.f.store.create(h.f.type('apps', 'v1', 'deployments'), NS, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name } }, template } }, adminCtx);
}

async function readyPod(h: H, name: string, app: string): Promise<void> {
  const pods = h.f.type('', 'v1', 'pods');
  await h.f.store.create(pods, NS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '100m' } } }] } }, adminCtx);
  await h.f.store.update(pods, NS, name, (cur) => ({ ...cur!, status: { phase: 'Running', startTime: LONG_AGO, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: LONG_AGO }] } }), { ...adminCtx, subresource: 'status' });
}

async function autoscaler(h: H, name: string, target: string, max = 10): Promise<void> {
  const spec = { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 1, maxReplicas: max, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] };
  await h.f.store.create(h.f.type('autoscaling', 'v2', 'horizontalpodautoscalers'), NS, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec }, adminCtx);
}

const condition = (o: { status?: Record<string, any> }, type: string) => (o.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

test('no metrics: ScalingActive False with FailedGetResourceMetric, warnings, the scale untouched; then usage scales the Deployment up', async (t) => {
  const h = await setup(t);
  await deployment(h, 'web', 1);
  await readyPod(h, 'web-1', 'web');
  await autoscaler(h, 'web', 'web');
  await h.until('ScalingActive reported', async () => condition(await h.hpa('web'), 'ScalingActive') !== undefined);
  t.like(condition(await h.hpa('web'), 'ScalingActive'), {
    status: 'False',
    reason: 'FailedGetResourceMetric',
    message: 'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
  });
  t.like((await h.hpa('web')).status, { currentReplicas: 1, desiredReplicas: 1 });
  t.true(h.events.some((e) => e.type === 'Warning' && e.reason === 'FailedGetResourceMetric'));
  t.true(h.events.some((e) => e.reason === 'FailedComputeMetricsReplicas' && e.message === 'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API'));
  t.is(await h.replicas('web'), 1);

  // 200m against a 100m request: 200% against 50%, four times the target.
  h.usage.set('web-1', 200);
  await h.clock.advance(15_000);
  await h.until('scaled', async () => (await h.replicas('web')) !== 1);
  t.is(await h.replicas('web'), 4);
  await h.until('status written', async () => (await h.hpa('web')).status?.desiredReplicas === 4);
  const hpa = await h.hpa('web');
  // (currentReplicas is 4 once its own status write has it reconciled again.)
  t.like(hpa.status, { desiredReplicas: 4, lastScaleTime: new Date(h.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z') });
  t.deepEqual(hpa.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 200 } } }]);
  t.like(condition(hpa, 'ScalingActive'), { status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)' });
  // SucceededRescale after the write; the reconcile its own status write starts finds the size
  // right and says ReadyForNewScale, as upstream's does.
  const able = condition(hpa, 'AbleToScale');
  t.is(able.status, 'True');
  t.true(
    (able.reason === 'SucceededRescale' && able.message === 'the HPA controller was able to update the target scale to 4') ||
      (able.reason === 'ReadyForNewScale' && able.message === 'recommended size matches current size'),
    JSON.stringify(able),
  );
  t.like(condition(hpa, 'ScalingLimited'), { status: 'False', reason: 'DesiredWithinRange' });
  t.true(h.events.some((e) => e.type === 'Normal' && e.reason === 'SuccessfulRescale' && e.message === 'New size: 4; reason: cpu resource utilization (percentage of request) above target'));
});

test('a target that does not exist is FailedGetScale; replicas above max are brought down to it', async (t) => {
  const h = await setup(t);
  await autoscaler(h, 'ghost', 'nothing');
  await h.until('AbleToScale reported', async () => condition(await h.hpa('ghost'), 'AbleToScale') !== undefined);
  t.like(condition(await h.hpa('ghost'), 'AbleToScale'), { status: 'False', reason: 'FailedGetScale', message: 'the HPA controller was unable to get the target\'s current scale: deployments.apps "nothing" not found' });
  await deployment(h, 'big', 8);
  await autoscaler(h, 'big', 'big', 3);
  await h.until('scaled down to max', async () => (await h.replicas('big')) === 3);
  t.true(h.events.some((e) => e.reason === 'SuccessfulRescale' && e.message === 'New size: 3; reason: Current number of replicas above Spec.MaxReplicas'));
});
