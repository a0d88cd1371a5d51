/**
 * The resource quota controller over a real store and informers, with a fake clock: status.hard
 * from the spec, status.used recounted from the namespace's objects in the quota's scopes, given
 * back when objects go or pods finish, names nothing counts left alone, and the periodic recount.
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { ResourceQuotaController } from '../../../../apiserver/controllers/resource-quota';
import { FakeClock } from '../../../helpers/fake-clock';
import { adminCtx, openFixture, type Fixture } from './store-fixture';

const NS = 'team';

interface H {
  f: Fixture;
  clock: FakeClock;
  status(name: string): Promise<{ hard?: Record<string, string>; used?: Record<string, string> }>;
  until(what: string, pred: () => Promise<boolean>): Promise<void>;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<H> {
  const f = await openFixture();
  const clock = new FakeClock(Date.parse('2025-03-01T12:00:00Z'));
  const c = new ResourceQuotaController(f.store, f.cache, f.registry, { log: f.log, clock, resyncMs: 60_000 });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  const quotas = f.type('', 'v1', 'resourcequotas');
  return {
    f,
    clock,
    status: async (name) => ((await f.store.get(quotas, NS, name)).status ?? {}),
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

const podOf = (name: string, spec: Record<string, unknown> = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '250m' }, limits: { cpu: '500m' } } }], ...spec },
});

async function quota(h: H, name: string, hard: Record<string, string>, spec: Record<string, unknown> = {}): Promise<void> {
  await h.f.store.create(h.f.type('', 'v1', 'resourcequotas'), NS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...spec } }, adminCtx);
}

test('a new quota gets status.hard and status.used counted from what is already there, within its scopes', async (t) => {
  const h = await setup(t);
  const pods = h.f.type('', 'v1', 'pods');
  await h.f.store.create(pods, NS, podOf('a'), adminCtx);
  await h.f.store.create(pods, NS, podOf('b', { activeDeadlineSeconds: 60 }), adminCtx);
  await h.f.store.create(pods, 'elsewhere', podOf('c'), adminCtx);
  await h.f.store.create(h.f.type('', 'v1', 'configmaps'), NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } }, adminCtx);
  await quota(h, 'all', { pods: '10', 'requests.cpu': '2', 'limits.cpu': '4', 'count/configmaps': '5', 'count/widgets.example.com': '3' });
  await quota(h, 'long-running', { pods: '10' }, { scopes: ['NotTerminating'] });
  await h.until('counted', async () => (await h.status('all')).used?.pods === '2' && (await h.status('long-running')).used?.pods === '1');
  t.deepEqual(await h.status('all'), {
    hard: { 'count/configmaps': '5', 'count/widgets.example.com': '3', 'limits.cpu': '4', pods: '10', 'requests.cpu': '2' },
    used: { 'count/configmaps': '1', 'limits.cpu': '1', pods: '2', 'requests.cpu': '500m' },
  });
});

test('usage is given back when objects are deleted or pods finish, and recounted on a spec change', async (t) => {
  const h = await setup(t);
  const pods = h.f.type('', 'v1', 'pods');
  await quota(h, 'q', { pods: '10', 'count/pods': '10' });
  await h.until('zero', async () => (await h.status('q')).used?.pods === '0');
  for (const n of ['a', 'b', 'c']) await h.f.store.create(pods, NS, podOf(n), adminCtx);
  await h.until('three', async () => (await h.status('q')).used?.pods === '3');
  await h.f.store.delete(pods, NS, 'a', {}, adminCtx);
  await h.until('two', async () => (await h.status('q')).used?.pods === '2');
  // A finished pod still exists (count/pods) but no longer counts as a pod.
  await h.f.store.update(pods, NS, 'b', (cur) => ({ ...cur!, status: { phase: 'Succeeded' } }), { ...adminCtx, subresource: 'status' });
  await h.until('finished', async () => (await h.status('q')).used?.pods === '1');
  t.is((await h.status('q')).used?.['count/pods'], '2');
  await h.f.store.update(h.f.type('', 'v1', 'resourcequotas'), NS, 'q', (cur) => ({ ...cur!, spec: { hard: { pods: '5' } } }), adminCtx);
  await h.until('new hard', async () => (await h.status('q')).hard?.pods === '5');
  t.deepEqual(await h.status('q'), { hard: { pods: '5' }, used: { pods: '1' } });
});

test('an overcharged usage (admission charged, the write never happened, the undo lost) is recounted at the resync, not on the status change', async (t) => {
  const h = await setup(t);
  await quota(h, 'q', { pods: '10' });
  await h.until('zero', async () => (await h.status('q')).used?.pods === '0');
  const quotas = h.f.type('', 'v1', 'resourcequotas');
  // Written as admission writes a charge: a status change alone is not recounted (as upstream) ...
  await h.f.store.update(quotas, NS, 'q', (cur) => ({ ...cur!, status: { hard: { pods: '10' }, used: { pods: '7' } } }), { ...adminCtx, subresource: 'status' });
  await h.clock.advance(30_000);
  t.is((await h.status('q')).used?.pods, '7');
  // ... until the resync (60 s here) recounts every quota.
  await h.clock.advance(30_000);
  await h.until('recounted', async () => (await h.status('q')).used?.pods === '0');
  t.true(h.clock.now() >= Date.parse('2025-03-01T12:01:00Z'));
});

test('regression: a resource served in two versions (HPA autoscaling/v2 and v1) is counted once', async (t) => {
  const h = await setup(t);
  const hpas = h.f.type('autoscaling', 'v2', 'horizontalpodautoscalers');
  const spec = { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 };
  await h.f.store.create(hpas, NS, { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' }, spec }, adminCtx);
  await quota(h, 'hpas', { 'count/horizontalpodautoscalers.autoscaling': '5' });
  await h.until('counted', async () => (await h.status('hpas')).used?.['count/horizontalpodautoscalers.autoscaling'] !== undefined);
  t.is((await h.status('hpas')).used?.['count/horizontalpodautoscalers.autoscaling'], '1');
});
