/**
 * The pods/binding handler (apiserver/handlers/pod-binding.ts) over plain HTTP in front of a real
 * ObjectStore, routed as the API server routes sub-resources.
 */
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { handlePodBinding } from '../../../../apiserver/handlers/pod-binding';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';
import { sendError } from '../../../../apiserver/server/respond';
import { adminCtx, openFixture, type Fixture } from '../controllers/store-fixture';

interface Harness {
  f: Fixture;
  url: string;
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> & { message?: string; reason?: string } }>;
  get(name: string): Promise<KObject>;
}

async function setup(t: { teardown(fn: () => Promise<void> | void): void }): Promise<Harness> {
  const f = await openFixture();
  const podType = f.type('', 'v1', 'pods');
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const info = parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
    const r: ResourceRequest = { req, res, info, query: url.searchParams, user: adminCtx.user, type: podType, store: f.store, cache: f.cache, log: f.log, signal: f.signal, now: f.clock.now };
    handlePodBinding(r).catch((err) => sendError(req, res, err));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(async () => {
    await new Promise((r) => server.close(r));
    await f.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    f,
    url,
    async post(path, body) {
      const res = await request(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    },
    get: (name) => f.store.get(podType, 'ns', name),
  };
}

async function createPod(h: Harness, name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): Promise<KObject> {
  return h.f.store.create(h.f.type('', 'v1', 'pods'), 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...meta }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec } }, adminCtx);
}

const binding = (name: string, node: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name, namespace: 'ns', ...extra },
  target: { apiVersion: 'v1', kind: 'Node', name: node },
});

const path = (name: string, q = '') => `/api/v1/namespaces/ns/pods/${name}/binding${q}`;

test('binding sets spec.nodeName and PodScheduled=True in one write and answers a Success Status', async (t) => {
  const h = await setup(t);
  const before = await createPod(h, 'p');
  const r = await h.post(path('p'), binding('p', 'n1', { annotations: { 'example.com/why': 'test' } }));
  t.is(r.status, 201, JSON.stringify(r.body));
  t.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const after = await h.get('p');
  t.is((after.spec as { nodeName?: string }).nodeName, 'n1');
  t.is(after.metadata.annotations?.['example.com/why'], 'test');
  const conds = (after.status as { conditions?: Array<Record<string, string>> }).conditions ?? [];
  const scheduled = conds.find((c) => c.type === 'PodScheduled');
  t.is(scheduled?.status, 'True');
  t.truthy(scheduled?.lastTransitionTime);
  t.is(Number(after.metadata.resourceVersion), Number(before.metadata.resourceVersion) + 1, 'one write');
  t.is((after.status as { phase?: string }).phase, 'Pending', 'the rest of the status is kept');
});

test('a second binding is 409 "pod X is already assigned to node Y" and changes nothing', async (t) => {
  const h = await setup(t);
  await createPod(h, 'p');
  t.is((await h.post(path('p'), binding('p', 'n1'))).status, 201);
  const r = await h.post(path('p'), binding('p', 'n2'));
  t.is(r.status, 409);
  t.is(r.body.reason, 'Conflict');
  t.is(r.body.message, 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"');
  t.is((r.body.details as { kind?: string }).kind, 'pods/binding');
  t.is(((await h.get('p')).spec as { nodeName?: string }).nodeName, 'n1');
});

test('a pod created with spec.nodeName cannot be bound again', async (t) => {
  const h = await setup(t);
  await createPod(h, 'p', { nodeName: 'n0' });
  const r = await h.post(path('p'), binding('p', 'n1'));
  t.is(r.status, 409);
  t.regex(r.body.message ?? '', /already assigned to node "n0"/);
});

test('terminating and gated pods are refused with upstream messages', async (t) => {
  const h = await setup(t);
  await createPod(h, 'doomed', {}, { finalizers: ['example.com/hold'] });
  await h.f.store.delete(h.f.type('', 'v1', 'pods'), 'ns', 'doomed', {}, adminCtx);
  const d = await h.post(path('doomed'), binding('doomed', 'n1'));
  t.is(d.status, 409);
  t.is(d.body.message, 'Operation cannot be fulfilled on pods/binding "doomed": pod doomed is being deleted, cannot be assigned to a host');
  await createPod(h, 'gated', { schedulingGates: [{ name: 'example.com/wait' }] });
  const g = await h.post(path('gated'), binding('gated', 'n1'));
  t.is(g.status, 409);
  t.is(g.body.message, 'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates');
});

test('bad bindings: name mismatch 400, bad target 422, missing pod 404, wrong uid 409', async (t) => {
  const h = await setup(t);
  await createPod(h, 'p');
  const mismatch = await h.post(path('p'), binding('q', 'n1'));
  t.is(mismatch.status, 400);
  t.is(mismatch.body.message, 'name in URL does not match name in Binding object');
  const kind = await h.post(path('p'), { ...binding('p', 'n1'), target: { kind: 'Service', name: 'n1' } });
  t.is(kind.status, 422);
  t.deepEqual((kind.body.details as { causes?: unknown[] }).causes, [{ reason: 'FieldValueNotSupported', message: 'Unsupported value: "Service": supported values: "Node", "<empty>"', field: 'target.kind' }]);
  const noName = await h.post(path('p'), { ...binding('p', ''), target: { kind: 'Node' } });
  t.is(noName.status, 422);
  t.regex(noName.body.message ?? '', /target\.name: Required value/);
  const missing = await h.post(path('ghost'), binding('ghost', 'n1'));
  t.is(missing.status, 404);
  t.is(missing.body.message, 'pods "ghost" not found');
  const uid = await h.post(path('p'), binding('p', 'n1', { uid: '00000000-0000-0000-0000-000000000000' }));
  t.is(uid.status, 409);
  t.regex(uid.body.message ?? '', /^Precondition failed: UID in precondition/);
  const otherNs = await h.post(path('p'), binding('p', 'n1', { namespace: 'elsewhere' }));
  t.is(otherNs.status, 400);
  t.is(((await h.get('p')).spec as { nodeName?: string }).nodeName, undefined);
});

test('dryRun=All answers Success without binding; GET is 405', async (t) => {
  const h = await setup(t);
  await createPod(h, 'p');
  const r = await h.post(path('p', '?dryRun=All'), binding('p', 'n1'));
  t.is(r.status, 201);
  t.is(((await h.get('p')).spec as { nodeName?: string }).nodeName, undefined);
  const g = await request(h.url + path('p'));
  t.is(g.statusCode, 405);
  await g.body.dump();
});

test('spec.nodeName stays immutable through the main resource', async (t) => {
  const h = await setup(t);
  await createPod(h, 'p');
  const podType = h.f.type('', 'v1', 'pods');
  const err = await t.throwsAsync(h.f.store.update(podType, 'ns', 'p', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), nodeName: 'n1' } }), adminCtx));
  t.regex(err.message, /pod updates may not change fields/);
  t.is(((await h.get('p')).spec as { nodeName?: string }).nodeName, undefined);
});
