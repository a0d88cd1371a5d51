/**
 * The pods/eviction sub-resource (handlers/pod-eviction.ts over store/evict-pod.ts) against a
 * real ObjectStore: budgets that allow, refuse (429 with the budget named) or are stale, several
 * budgets (500), pods that skip budgets (terminal, Pending, terminating), unhealthy pods and
 * unhealthyPodEvictionPolicy, DeleteOptions (grace period, preconditions, dry run), protobuf and
 * v1beta1 bodies, and the DisruptionTarget condition written before the delete.
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { encodeObject } from '../../../../apiserver/codec/envelope';
import { makePodEvictionHandler } from '../../../../apiserver/handlers/pod-eviction';
import { evictionSchema } from '../../../../apiserver/registry/types/poddisruptionbudgets';
import { admin, ctx, openStore, pod, type StoreFixture } from '../store/fixture';
import { call, type CallOptions } from './fake-http';

const NS = 'default';

interface H {
  f: StoreFixture;
  evict(name: string, o?: { body?: Record<string, unknown>; query?: string } & Omit<CallOptions, 'body'>): ReturnType<typeof call>;
  pod(name: string): Promise<KObject | null>;
  pdb(name: string): Promise<KObject & { status?: Record<string, any> }>;
}

async function withStore(body: (h: H) => Promise<void>): Promise<void> {
  const f = await openStore();
  const pdbType = f.type('poddisruptionbudgets', 'policy');
  const handler = makePodEvictionHandler({ podDisruptionBudgets: pdbType, admit: () => Promise.resolve() });
  const h: H = {
    f,
    evict: (name, o = {}) =>
      call(f, handler, 'POST', `/api/v1/namespaces/${NS}/pods/${name}/eviction${o.query ?? ''}`, {
        ...o,
        body: o.raw === undefined ? { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS }, ...o.body } : undefined,
      }),
    pod: (name) => f.store.get(f.type('pods'), NS, name).catch(() => null),
    pdb: (name) => f.store.get(pdbType, NS, name),
  };
  try {
    await body(h);
  } finally {
    await f.close();
  }
}

/** A pod bound to node n1 in phase Running, ready or not (a bound pod stays terminating after its delete, as with a kubelet). */
async function runningPod(f: StoreFixture, name: string, o: { ready?: boolean; labels?: Record<string, string>; phase?: string } = {}): Promise<KObject> {
  const p = pod(name, { nodeName: 'n1' });
  p.metadata.labels = o.labels ?? { app: 'web' };
  const created = await f.store.create(f.type('pods'), NS, p, admin);
  const { object } = await f.store.update(
    f.type('pods'),
    NS,
    name,
    (cur) => ({ ...cur!, status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] } }),
    ctx({ subresource: 'status' }),
  );
  return object ?? created;
}

/** A budget with the given spec and status (observedGeneration follows the generation unless stale). */
async function budget(f: StoreFixture, name: string, spec: Record<string, unknown>, status: Record<string, unknown>, stale = false): Promise<KObject> {
  const t = f.type('poddisruptionbudgets', 'policy');
  await f.store.create(t, NS, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec }, admin);
  const { object } = await f.store.update(t, NS, name, (cur) => ({ ...cur!, status: { observedGeneration: stale ? 0 : cur!.metadata.generation, ...status } }), ctx({ subresource: 'status' }));
  return object;
}

const sel = { matchLabels: { app: 'web' } };
const conditions = (o: KObject | null) => ((o?.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? []);

test('without a budget a running pod is evicted: 201 Success, DisruptionTarget set, then deleted with its grace period', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    const res = await h.evict('web-1');
    t.is(res.statusCode, 201, res.text);
    t.like(res.body, { kind: 'Status', status: 'Success', code: 201 });
    const p = await h.pod('web-1');
    t.truthy(p?.metadata.deletionTimestamp, 'a bound pod terminates (its node finishes the delete)');
    t.like(conditions(p).find((c) => c.type === 'DisruptionTarget'), { status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' });
  }));

test('a budget that allows nothing refuses with 429 naming it; the pod is untouched', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await budget(h.f, 'web', { minAvailable: 1, selector: sel }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
    const res = await h.evict('web-1');
    t.is(res.statusCode, 429);
    t.is(res.body.reason, 'TooManyRequests');
    t.is(res.body.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    t.deepEqual(res.body.details.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }]);
    t.false('retry-after' in res.headers);
    const p = await h.pod('web-1');
    t.falsy(p?.metadata.deletionTimestamp);
    t.falsy(conditions(p).find((c) => c.type === 'DisruptionTarget'));
  }));

test('a budget that allows one takes it: disruptionsAllowed - 1, the pod in disruptedPods at the eviction time, DisruptionAllowed False', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await runningPod(h.f, 'web-2');
    await budget(h.f, 'web', { minAvailable: 1, selector: sel }, { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    const res = await h.evict('web-1');
    t.is(res.statusCode, 201, res.text);
    const pdb = await h.pdb('web');
    const status = pdb.status as Record<string, any>;
    t.is(status.disruptionsAllowed, 0);
    t.deepEqual(status.disruptedPods, { 'web-1': new Date(h.f.clock.now()).toISOString().replace('.000Z', 'Z') });
    t.like(status.conditions[0], { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' });
    t.truthy((await h.pod('web-1'))?.metadata.deletionTimestamp);
    // The second is refused until the controller recomputes the budget.
    t.is((await h.evict('web-2')).statusCode, 429);
  }));

test('two evictions racing for the one disruption a budget allows: one wins, the other is refused', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await runningPod(h.f, 'web-2');
    await budget(h.f, 'web', { maxUnavailable: 1, selector: sel }, { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    const codes = (await Promise.all([h.evict('web-1'), h.evict('web-2')])).map((r) => r.statusCode).sort();
    t.deepEqual(codes, [201, 429]);
    t.is(Object.keys((await h.pdb('web')).status!.disruptedPods as object).length, 1);
  }));

test('a budget whose status is older than its spec answers 429 "still being processed" with Retry-After 10', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await budget(h.f, 'web', { minAvailable: 0, selector: sel }, { disruptionsAllowed: 5 }, true);
    const res = await h.evict('web-1');
    t.is(res.statusCode, 429);
    t.is(res.body.details.causes[0].message, 'The disruption budget web is still being processed by the server.');
    t.is(res.body.details.retryAfterSeconds, 10);
    t.is(res.headers['retry-after'], '10');
  }));

test('several budgets covering the pod: upstream\'s 500 Status, nothing changes', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await budget(h.f, 'a', { minAvailable: 0, selector: sel }, { disruptionsAllowed: 1 });
    await budget(h.f, 'b', { minAvailable: 0, selector: {} }, { disruptionsAllowed: 1 });
    const res = await h.evict('web-1');
    t.is(res.statusCode, 500);
    t.like(res.body, { kind: 'Status', status: 'Failure', code: 500, message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' });
    t.falsy((await h.pod('web-1'))?.metadata.deletionTimestamp);
  }));

test('an empty selector covers every pod of the namespace; an absent one none', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1', { labels: { other: 'x' } });
    await budget(h.f, 'none', { minAvailable: 1 }, { disruptionsAllowed: 0 });
    await budget(h.f, 'all', { minAvailable: 1, selector: {} }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 });
    const res = await h.evict('web-1');
    t.is(res.statusCode, 429);
    t.regex(res.body.details.causes[0].message, /^The disruption budget all /);
  }));

test('terminal, Pending and terminating pods are deleted without looking at their budget', (t) =>
  withStore(async (h) => {
    await budget(h.f, 'web', { minAvailable: 5, selector: sel }, { disruptionsAllowed: 0 });
    await runningPod(h.f, 'done', { phase: 'Succeeded' });
    await runningPod(h.f, 'failed', { phase: 'Failed' });
    await runningPod(h.f, 'pending', { phase: 'Pending', ready: false });
    await runningPod(h.f, 'going');
    await h.f.store.delete(h.f.type('pods'), NS, 'going', { gracePeriodSeconds: 30 }, admin);
    for (const name of ['done', 'failed', 'pending', 'going']) t.is((await h.evict(name)).statusCode, 201, name);
    // The terminating pod keeps its grace period: still there, for its node to finish.
    t.truthy((await h.pod('going'))?.metadata.deletionTimestamp);
    t.is(await h.pod('done'), null);
    t.is((await h.pdb('web')).status!.disruptionsAllowed, 0);
    t.falsy((await h.pdb('web')).status!.disruptedPods);
  }));

test('an unready pod: AlwaysAllow lets it go, IfHealthyBudget only while the budget is healthy; no disruption is taken', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'a-1', { ready: false, labels: { app: 'a' } });
    await budget(h.f, 'a', { minAvailable: 3, selector: { matchLabels: { app: 'a' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' }, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 3 });
    t.is((await h.evict('a-1')).statusCode, 201);

    await runningPod(h.f, 'b-1', { ready: false, labels: { app: 'b' } });
    await budget(h.f, 'b', { minAvailable: 2, selector: { matchLabels: { app: 'b' } } }, { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 });
    t.is((await h.evict('b-1')).statusCode, 201);
    t.is((await h.pdb('b')).status!.disruptedPods, undefined);

    await runningPod(h.f, 'c-1', { ready: false, labels: { app: 'c' } });
    await budget(h.f, 'c', { minAvailable: 2, selector: { matchLabels: { app: 'c' } }, unhealthyPodEvictionPolicy: 'IfHealthyBudget' }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2 });
    t.is((await h.evict('c-1')).statusCode, 429);
  }));

test('DeleteOptions: gracePeriodSeconds 0 removes the pod at once; a uid precondition that does not match is 409', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    const wrongUid = await h.evict('web-1', { body: { deleteOptions: { preconditions: { uid: 'not-this-one' } } } });
    t.is(wrongUid.statusCode, 409);
    t.regex(wrongUid.body.message, /the UID in the precondition \(not-this-one\) does not match the UID in record/);
    const res = await h.evict('web-1', { body: { deleteOptions: { gracePeriodSeconds: 0 } } });
    t.is(res.statusCode, 201, res.text);
    t.is(await h.pod('web-1'), null);
  }));

test('a resourceVersion precondition is honoured (stale: 409) and moves with the condition write', (t) =>
  withStore(async (h) => {
    const p = await runningPod(h.f, 'web-1');
    const stale = await h.evict('web-1', { body: { deleteOptions: { preconditions: { resourceVersion: '1' } } } });
    t.is(stale.statusCode, 409);
    const ok = await h.evict('web-1', { body: { deleteOptions: { gracePeriodSeconds: 0, preconditions: { resourceVersion: p.metadata.resourceVersion } } } });
    t.is(ok.statusCode, 201, ok.text);
    t.is(await h.pod('web-1'), null);
  }));

test('dry run, in the query or the body: checked against the budget, nothing written', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await budget(h.f, 'web', { minAvailable: 0, selector: sel }, { disruptionsAllowed: 1, currentHealthy: 1 });
    const before = await h.pdb('web');
    t.is((await h.evict('web-1', { query: '?dryRun=All' })).statusCode, 201);
    t.is((await h.evict('web-1', { body: { deleteOptions: { dryRun: ['All'] } } })).statusCode, 201);
    t.deepEqual(await h.pdb('web'), before);
    const p = await h.pod('web-1');
    t.falsy(p?.metadata.deletionTimestamp);
    t.falsy(conditions(p).find((c) => c.type === 'DisruptionTarget'));
    t.is((await h.evict('web-1', { query: '?dryRun=Some' })).statusCode, 400);
  }));

test('bodies: protobuf (as kubectl drain sends) and policy/v1beta1 are accepted; other versions, kinds and names are 400', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    await runningPod(h.f, 'web-2');
    const proto = encodeObject(evictionSchema, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1', namespace: NS }, deleteOptions: { gracePeriodSeconds: 0 } });
    const res = await h.evict('web-1', { raw: proto, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf' } });
    t.is(res.statusCode, 201, res.text);
    t.is(res.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    t.is(await h.pod('web-1'), null);

    const bad = async (body: Record<string, unknown>) => (await h.evict('web-2', { body })).body.message as string;
    t.is(await bad({ apiVersion: 'v1' }), 'the API version in the data (v1) does not match the expected API version (policy/v1)');
    t.is(await bad({ kind: 'Pod' }), 'the kind in the data (Pod) does not match the expected kind (Eviction)');
    t.is(await bad({ metadata: { name: 'web-1' } }), 'name in URL does not match name in Eviction object');
    t.is(await bad({ metadata: { name: 'web-2', namespace: 'other' } }), 'the namespace of the provided object does not match the namespace sent on the request');
    t.is((await h.evict('web-2', { body: { apiVersion: 'policy/v1beta1' } })).statusCode, 201);
  }));

test('a pod that does not exist is 404; other verbs are 405', (t) =>
  withStore(async (h) => {
    const res = await h.evict('ghost');
    t.is(res.statusCode, 404);
    t.is(res.body.message, 'pods "ghost" not found');
    const handler = makePodEvictionHandler({ podDisruptionBudgets: h.f.type('poddisruptionbudgets', 'policy'), admit: () => Promise.resolve() });
    t.is((await call(h.f, handler, 'GET', `/api/v1/namespaces/${NS}/pods/ghost/eviction`)).statusCode, 405);
  }));

test('admission sees a CREATE of pods/eviction with the Eviction; a rejection stops the eviction', (t) =>
  withStore(async (h) => {
    await runningPod(h.f, 'web-1');
    const seen: Array<{ operation: string; subresource: string; kind?: string }> = [];
    const handler = makePodEvictionHandler({
      podDisruptionBudgets: h.f.type('poddisruptionbudgets', 'policy'),
      admit: (a) => {
        seen.push({ operation: a.operation, subresource: a.subresource, kind: a.object?.kind });
        return Promise.reject(new Error('refused'));
      },
    });
    const res = await call(h.f, handler, 'POST', `/api/v1/namespaces/${NS}/pods/web-1/eviction`, { body: { kind: 'Eviction', metadata: { name: 'web-1' } } });
    t.is(res.statusCode, 500);
    t.deepEqual(seen, [{ operation: 'CREATE', subresource: 'eviction', kind: 'Eviction' }]);
    t.falsy((await h.pod('web-1'))?.metadata.deletionTimestamp);
  }));
