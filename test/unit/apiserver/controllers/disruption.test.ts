/**
 * The disruption controller (controllers/disruption.ts) over a real store and informers, with a
 * fake clock for its queues and timestamps: every PodDisruptionBudget's status from the pods and
 * their controllers' scale (a fake owner kind with spec.replicas stands for the workload kinds),
 * percentages, unmanaged pods, the fail-safe, disruptedPods expiry, stale DisruptionTarget
 * conditions and the events.
 */
import test from 'ava';
import type { EventObjectRef, EventRecorder } from '../../../../common/events/recorder';
import type { KObject } from '../../../../apiserver/api/types';
import { DisruptionController } from '../../../../apiserver/controllers/disruption';
import { withMeta } from '../../../../apiserver/registry/common-schemas';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { int32, obj } from '../../../../apiserver/registry/schema-builders';
import { FakeClock } from '../../../helpers/fake-clock';
import { adminCtx, openFixture, type Fixture } from './store-fixture';

const NS = 'default';
const T0 = Date.parse('2025-03-01T12:00:00Z');

/** A stand-in for the workload kinds other branches add: a namespaced kind with spec.replicas. */
const widgetType: ResourceType = {
  group: 'example.svc.io',
  version: 'v1',
  resource: 'widgets',
  singular: 'widget',
  kind: 'Widget',
  listKind: 'WidgetList',
  namespaced: true,
  schema: withMeta('example.Widget', { spec: [2, obj('example.WidgetSpec', { replicas: [1, int32('Desired pods.')] })] }),
  hasStatus: false,
};

interface Recorded {
  regarding: EventObjectRef;
  type: string;
  reason: string;
  message: string;
}

interface H {
  f: Fixture;
  clock: FakeClock;
  events: Recorded[];
  pdb(name: string): Promise<KObject & { status?: Record<string, any> }>;
  /** Moves fake time in small steps (letting the store and informers work) until pred holds; bounded. */
  until(what: string, pred: () => Promise<boolean>): Promise<void>;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<H> {
  const f = await openFixture();
  f.registry.register(widgetType);
  const clock = new FakeClock(T0);
  const events: Recorded[] = [];
  const recorder: EventRecorder = { event: (regarding, type, reason, message) => void events.push({ regarding, type, reason, message }) };
  const c = new DisruptionController(f.store, f.cache, f.registry, { log: f.log, clock, recorder });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  const pdbType = f.type('policy', 'v1', 'poddisruptionbudgets');
  return {
    f,
    clock,
    events,
    pdb: (name) => f.store.get(pdbType, NS, name),
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

async function pod(h: H, name: string, o: { ready?: boolean; labels?: Record<string, string>; owner?: KObject; ownerKind?: string; conditions?: unknown[] } = {}): Promise<void> {
  const pods = h.f.type('', 'v1', 'pods');
  const ownerReferences = o.owner ? [{ apiVersion: o.owner.apiVersion!, kind: o.ownerKind ?? o.owner.kind!, name: o.owner.metadata.name!, uid: o.owner.metadata.uid!, controller: true }] : undefined;
  await h.f.store.create(
    pods,
    NS,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: o.labels ?? { app: 'web' }, ...(ownerReferences ? { ownerReferences } : {}) }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1.36' }] } },
    adminCtx,
  );
  await setReady(h, name, o.ready ?? true, o.conditions);
}

async function setReady(h: H, name: string, ready: boolean, extra: unknown[] = []): Promise<void> {
  await h.f.store.update(
    h.f.type('', 'v1', 'pods'),
    NS,
    name,
    (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }, ...extra] } }),
    { ...adminCtx, subresource: 'status' },
  );
}

async function widget(h: H, name: string, replicas: number): Promise<KObject> {
  return h.f.store.create(widgetType, NS, { apiVersion: 'example.svc.io/v1', kind: 'Widget', metadata: { name }, spec: { replicas } }, adminCtx);
}

async function budget(h: H, name: string, spec: Record<string, unknown>): Promise<void> {
  await h.f.store.create(h.f.type('policy', 'v1', 'poddisruptionbudgets'), NS, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec }, adminCtx);
}

const sel = { matchLabels: { app: 'web' } };
const condition = (o: { status?: Record<string, any> }) => (o.status?.conditions ?? []).find((c: { type: string }) => c.type === 'DisruptionAllowed');

test('minAvailable as an integer: expected = pods selected, allowed = healthy - minAvailable; the condition follows', async (t) => {
  const h = await setup(t);
  for (const n of ['a', 'b', 'c']) await pod(h, n);
  await pod(h, 'other', { labels: { app: 'db' } });
  await budget(h, 'web', { minAvailable: 2, selector: sel });
  await h.until('computed', async () => (await h.pdb('web')).status?.observedGeneration === 1);
  const s = (await h.pdb('web')).status!;
  t.like(s, { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1, observedGeneration: 1 });
  t.like(condition(await h.pdb('web')), { status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 1 });

  await setReady(h, 'c', false);
  await h.until('recomputed', async () => (await h.pdb('web')).status?.currentHealthy === 2);
  t.like((await h.pdb('web')).status, { disruptionsAllowed: 0, expectedPods: 3 });
  t.like(condition(await h.pdb('web')), { status: 'False', reason: 'InsufficientPods' });

  // A spec change is observed at its new generation.
  await h.f.store.update(h.f.type('policy', 'v1', 'poddisruptionbudgets'), NS, 'web', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), minAvailable: 1 } }), adminCtx);
  await h.until('new generation', async () => (await h.pdb('web')).status?.observedGeneration === 2);
  t.like((await h.pdb('web')).status, { desiredHealthy: 1, disruptionsAllowed: 1 });
});

test('percentages and maxUnavailable take the scale of the pods\' controller (spec.replicas), rounding up', async (t) => {
  const h = await setup(t);
  const w = await widget(h, 'w', 4);
  for (const n of ['a', 'b', 'c']) await pod(h, n, { owner: w });
  await budget(h, 'max', { maxUnavailable: '50%', selector: sel });
  await h.until('max computed', async () => (await h.pdb('max')).status?.observedGeneration === 1);
  // expected 4 (the widget's replicas, though 3 pods exist), maxUnavailable ceil(2) = 2, desired 2, healthy 3.
  t.like((await h.pdb('max')).status, { expectedPods: 4, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 });

  await h.f.store.delete(h.f.type('policy', 'v1', 'poddisruptionbudgets'), NS, 'max', {}, adminCtx);
  await budget(h, 'min', { minAvailable: '90%', selector: sel });
  await h.until('min computed', async () => (await h.pdb('min')).status?.observedGeneration === 1);
  // ceil(3.6) = 4 desired, 3 healthy: nothing allowed.
  t.like((await h.pdb('min')).status, { expectedPods: 4, desiredHealthy: 4, disruptionsAllowed: 0 });

  await h.f.store.delete(h.f.type('policy', 'v1', 'poddisruptionbudgets'), NS, 'min', {}, adminCtx);
  await budget(h, 'abs', { maxUnavailable: 1, selector: sel });
  await h.until('abs computed', async () => (await h.pdb('abs')).status?.observedGeneration === 1);
  t.like((await h.pdb('abs')).status, { expectedPods: 4, desiredHealthy: 3, disruptionsAllowed: 0 });
});

test('pods without a controller are left out of a percentage and reported; a controller that cannot be read fails safe', async (t) => {
  const h = await setup(t);
  await pod(h, 'loose');
  await budget(h, 'web', { maxUnavailable: '10%', selector: sel });
  await h.until('computed', async () => (await h.pdb('web')).status?.observedGeneration === 1);
  t.like((await h.pdb('web')).status, { expectedPods: 0, disruptionsAllowed: 0 });
  t.true(h.events.some((e) => e.reason === 'UnmanagedPods' && e.type === 'Warning' && e.regarding.name === 'web'));

  // Owned by a ConfigMap: a kind without replicas.
  const cm = await h.f.store.create(h.f.type('', 'v1', 'configmaps'), NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } }, adminCtx);
  await pod(h, 'owned', { owner: cm, labels: { app: 'cm' } });
  await budget(h, 'cm', { maxUnavailable: 1, selector: { matchLabels: { app: 'cm' } } });
  await h.until('fail-safe', async () => condition(await h.pdb('cm'))?.reason === 'SyncFailed');
  t.like(condition(await h.pdb('cm')), { status: 'False', reason: 'SyncFailed', message: 'configmaps does not implement the scale subresource' });
  t.is((await h.pdb('cm')).status!.disruptionsAllowed, 0);
  t.true(h.events.some((e) => e.reason === 'CalculateExpectedPodCountFailed'));

  // Owned by a kind nobody serves.
  await pod(h, 'alien', { labels: { app: 'alien' }, owner: { apiVersion: 'example.svc.io/v1', kind: 'Gadget', metadata: { name: 'g', uid: 'u-1' } } });
  await budget(h, 'alien', { minAvailable: '50%', selector: { matchLabels: { app: 'alien' } } });
  await h.until('fail-safe', async () => condition(await h.pdb('alien'))?.reason === 'SyncFailed');
  t.is(condition(await h.pdb('alien')).message, 'no matches for kind "Gadget" in version "example.svc.io/v1"');

  // A controller that is gone: "found no controllers".
  const w = await widget(h, 'gone', 2);
  await pod(h, 'orphan', { owner: w, labels: { app: 'gone' } });
  await h.f.store.delete(widgetType, NS, 'gone', { propagationPolicy: 'Orphan' }, adminCtx).catch(() => undefined);
  await h.f.store.remove(widgetType, NS, 'gone');
  await budget(h, 'gone', { maxUnavailable: 1, selector: { matchLabels: { app: 'gone' } } });
  await h.until('fail-safe', async () => condition(await h.pdb('gone'))?.reason === 'SyncFailed');
  t.is(condition(await h.pdb('gone')).message, 'found no controllers for pod "orphan"');
});

test('a pod recorded in disruptedPods is not counted as healthy until it terminates or 2 minutes pass; then it is dropped', async (t) => {
  const h = await setup(t);
  for (const n of ['a', 'b']) await pod(h, n);
  await budget(h, 'web', { minAvailable: 1, selector: sel });
  await h.until('computed', async () => (await h.pdb('web')).status?.disruptionsAllowed === 1);
  // What the eviction sub-resource writes when it grants the disruption of a.
  const pdbType = h.f.type('policy', 'v1', 'poddisruptionbudgets');
  await h.f.store.update(pdbType, NS, 'web', (cur) => ({ ...cur!, status: { ...(cur!.status as object), disruptionsAllowed: 0, disruptedPods: { a: '2025-03-01T12:00:00Z' } } }), { ...adminCtx, subresource: 'status' });
  await h.clock.advance(60_000);
  await h.until('a not healthy', async () => (await h.pdb('web')).status?.currentHealthy === 1);
  t.deepEqual((await h.pdb('web')).status!.disruptedPods, { a: '2025-03-01T12:00:00Z' });
  t.is((await h.pdb('web')).status!.disruptionsAllowed, 0);

  // The pod never went: at 2 minutes the entry is dropped and the pod counts again.
  await h.clock.advance(59_000);
  t.like((await h.pdb('web')).status, { currentHealthy: 1 });
  await h.until('expired', async () => (await h.pdb('web')).status?.currentHealthy === 2);
  t.is((await h.pdb('web')).status!.disruptedPods, undefined);
  t.is((await h.pdb('web')).status!.disruptionsAllowed, 1);
  t.true(h.events.some((e) => e.reason === 'NotDeleted' && e.regarding.name === 'a'));
});

test('a DisruptionTarget condition on a pod that never terminated goes back to False after 2 minutes', async (t) => {
  const h = await setup(t);
  const target = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: '2025-03-01T12:00:00Z' };
  await pod(h, 'stuck', { conditions: [target] });
  const cond = async () => ((await h.f.store.get(h.f.type('', 'v1', 'pods'), NS, 'stuck')).status as { conditions: Array<Record<string, string>> }).conditions.find((c) => c.type === 'DisruptionTarget')!;
  await h.clock.advance(119_000);
  t.is((await cond()).status, 'True');
  await h.until('reset', async () => (await cond()).status === 'False');
  t.false('reason' in (await cond()));
});

test('events: NoPods for a budget selecting nothing; MultiplePodDisruptionBudgets for a pod several budgets cover', async (t) => {
  const h = await setup(t);
  await budget(h, 'empty', { minAvailable: 1, selector: { matchLabels: { app: 'none' } } });
  await h.until('computed', async () => (await h.pdb('empty')).status?.observedGeneration === 1);
  t.like((await h.pdb('empty')).status, { expectedPods: 0, desiredHealthy: 1, currentHealthy: 0, disruptionsAllowed: 0 });
  t.true(h.events.some((e) => e.reason === 'NoPods' && e.type === 'Normal' && e.message === 'No matching pods found'));

  await budget(h, 'one', { minAvailable: 0, selector: sel });
  await budget(h, 'two', { minAvailable: 0, selector: {} });
  await h.until('computed', async () => (await h.pdb('two')).status?.observedGeneration === 1);
  await pod(h, 'p');
  await h.until('event', () => Promise.resolve(h.events.some((e) => e.reason === 'MultiplePodDisruptionBudgets')));
  t.regex(h.events.find((e) => e.reason === 'MultiplePodDisruptionBudgets')!.message, /matches multiple PodDisruptionBudgets/);
  // Both are computed with the pod.
  await h.until('both', async () => (await h.pdb('one')).status?.currentHealthy === 1 && (await h.pdb('two')).status?.currentHealthy === 1);
  t.like((await h.pdb('one')).status, { currentHealthy: 1, expectedPods: 1 });
  t.like((await h.pdb('two')).status, { currentHealthy: 1, expectedPods: 1 });
});
