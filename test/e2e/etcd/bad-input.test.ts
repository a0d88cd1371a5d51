import test from 'ava';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startEtcdCluster, type EtcdCluster } from '../../helpers/etcd-cluster';
import { freePort } from '../../helpers/free-port';
import { call, type JsonResponse } from '../../helpers/http';
import { adminAgent, eventually, spawnApiServer } from './load';

// The bad inputs of issue 7: etcd unreachable at start, an endpoint of another etcd cluster, and
// objects in the store that cannot be decoded.

const PREFIX = '/registry-svc';

test('etcd unreachable at start: the server listens, reports not ready, and becomes ready once etcd is there', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-no-etcd-'));
  const etcdPort = await freePort();
  const port = await freePort();
  // startApiServer resolves only once readyz is 200: meanwhile the server is probed directly.
  const starting = startApiServer({ dataDir, port, args: [`--etcd-servers=http://127.0.0.1:${etcdPort}`] });
  let cluster: EtcdCluster | undefined;
  let server: RunningApiServer | undefined;
  t.teardown(async () => {
    await (server ?? (await starting.catch(() => undefined)))?.stop();
    await cluster?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const agent = await eventuallyValue(() => adminAgent(dataDir), 30_000);
  let readyz = { status: 0, text: '' };
  t.true(
    await eventually(async () => {
      const r = await call(agent, 'GET', `https://127.0.0.1:${port}/readyz?verbose`);
      readyz = { status: r.status, text: r.text };
      return true;
    }, 30_000),
    'the server did not listen without etcd',
  );
  t.is(readyz.status, 500);
  t.regex(readyz.text, /\[-\]etcd failed/);
  t.regex(readyz.text, /\[-\]informer-sync failed/);
  const write = await call(agent, 'POST', `https://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`, { metadata: { name: 'early' } });
  t.true(write.status >= 500 && write.status <= 599, `a write without etcd: ${write.status}`);
  t.is(write.body?.kind, 'Status');
  // Some time later it is still trying.
  await new Promise((r) => setTimeout(r, 1500));
  t.is((await call(agent, 'GET', `https://127.0.0.1:${port}/readyz`)).status, 500);
  await agent.close();

  cluster = await startEtcdCluster({ size: 1, clientPorts: [etcdPort] });
  server = await starting; // readyz 200
  const ok = await call(server.admin, 'POST', `${server.url}/api/v1/namespaces/default/configmaps`, { metadata: { name: 'late' } });
  t.is(ok.status, 201);
  t.regex((await call(server.admin, 'GET', `${server.url}/readyz?verbose`)).text, /\[\+\]etcd ok/);
});

test('an endpoint of another etcd cluster in --etcd-servers never receives data', async (t) => {
  const a = await startEtcdCluster({ size: 3 });
  const b = await startEtcdCluster({ size: 1 });
  t.teardown(() => Promise.all([a.close(), b.close()]).then(() => undefined));
  const raw = new Etcd3({ hosts: b.endpoints() });
  t.teardown(() => raw.close());
  t.not((await new Etcd3({ hosts: a.endpoints()[0] }).maintenance.status()).header.cluster_id, (await raw.maintenance.status()).header.cluster_id);

  // Three members of A and one of B: A is the majority; B must never be used.
  const server = await startApiServer({ args: [`--etcd-servers=${[...a.endpoints(), ...b.endpoints()].join(',')}`] });
  try {
    for (let i = 0; i < 20; i++) {
      const r = await call(server.admin, 'POST', `${server.url}/api/v1/namespaces/default/configmaps`, { metadata: { name: `mixed-${i}` } });
      t.is(r.status, 201, r.text);
    }
    const list = await call(server.admin, 'GET', `${server.url}/api/v1/namespaces/default/configmaps`);
    // The namespace also holds the root CA ConfigMap the control plane publishes.
    t.is(list.body.items.filter((i: { metadata: { name: string } }) => i.metadata.name.startsWith('mixed-')).length, 20);
    t.is(Number(await raw.getAll().prefix(PREFIX).count()), 0, 'keys were written to the other cluster');
    t.regex(server.output(), /belongs to another/);
  } finally {
    await server.stop();
  }

  // One member of each: no majority, so the server must refuse rather than pick one: it stays
  // not ready and writes nothing anywhere.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-split-'));
  const port = await freePort();
  const split = spawnApiServer(dataDir, port, [`--etcd-servers=${[a.endpoints()[0], ...b.endpoints()].join(',')}`]);
  t.teardown(async () => {
    await split.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const agent = await eventuallyValue(() => adminAgent(dataDir), 30_000);
  t.teardown(() => agent.close());
  const readyz = async () => call(agent, 'GET', `https://127.0.0.1:${port}/readyz?verbose`);
  t.true(await eventually(async () => (await readyz()).status > 0, 30_000), 'the server did not listen');
  await new Promise((r) => setTimeout(r, 3000));
  const r = await readyz();
  t.is(r.status, 500, `readyz of a server on two clusters: ${r.text}`);
  t.regex(r.text, /\[-\]etcd failed/);
  const w = await call(agent, 'POST', `https://127.0.0.1:${port}/api/v1/namespaces/default/configmaps`, { metadata: { name: 'split' } });
  t.is(w.status, 503);
  t.regex(split.output(), /different clusters/);
  t.is(Number(await raw.getAll().prefix(PREFIX).count()), 0);
});

test('an object that cannot be decoded: reads report it, the rest keeps working, and unsafe deletion needs its gate', async (t) => {
  const cluster = await startEtcdCluster({ size: 1 });
  const server = await startApiServer({ args: [`--etcd-servers=${cluster.endpoints()[0]}`] });
  const raw = new Etcd3({ hosts: cluster.endpoints() });
  t.teardown(async () => {
    raw.close();
    await server.stop();
    await cluster.close();
  });
  const base = `${server.url}/api/v1/namespaces/default/configmaps`;
  t.is((await call(server.admin, 'POST', base, { metadata: { name: 'good' } })).status, 201);
  // What a bug, a disk error or another tool could leave behind.
  await raw.put(`${PREFIX}/core/configmaps/default/broken`).value('{"metadata": {"name": "broken"'); // truncated JSON
  await raw.put(`${PREFIX}/core/configmaps/default/no-meta`).value('[]');

  const get = await call(server.admin, 'GET', `${base}/broken`);
  t.log(`GET: ${get.status} ${get.body?.message}`);
  t.is(get.status, 500);
  t.is(get.body?.reason, 'InternalError');
  t.regex(get.body?.message, /\/core\/configmaps\/default\/broken/);
  const list = await call(server.admin, 'GET', base);
  t.log(`LIST: ${list.status} ${list.body?.message}`);
  t.is(list.status, 500);
  t.regex(list.body?.message, /\/core\/configmaps\/default\/broken/);
  t.regex(list.body?.message, /\/core\/configmaps\/default\/no-meta/);
  const del = await call(server.admin, 'DELETE', `${base}/broken`);
  t.is(del.status, 500, 'a normal delete reads the object first and reports the read error');

  // The watch cache survived the undecodable events: new writes still reach watchers and
  // "not older than" reads.
  const next = await call(server.admin, 'POST', base, { metadata: { name: 'after' } });
  t.is(next.status, 201);
  const rv = next.body.metadata.resourceVersion;
  const fresh = await call(server.admin, 'GET', `${base}/after?resourceVersion=${rv}`);
  t.is(fresh.status, 200, `read at the new revision: ${fresh.status} ${fresh.body?.message}`);
  const watch = await call(server.admin, 'GET', `${base}?watch=1&resourceVersion=${Number(rv) - 1}&timeoutSeconds=1`);
  t.regex(watch.text, /"name":"after"/);
  t.is((await call(server.admin, 'GET', `${base}/good`)).status, 200);

  // Unsafe deletion (spec 2.5) is refused while the AllowUnsafeMalformedObjectDeletion gate is off.
  const unsafe = await call(server.admin, 'DELETE', `${base}/broken`, { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true });
  t.is(unsafe.status, 400);
  t.regex(unsafe.body?.message, /AllowUnsafeMalformedObjectDeletion/);
  t.is(Number(await raw.getAll().prefix(`${PREFIX}/core/configmaps/default/broken`).count()), 1);
});

test('with AllowUnsafeMalformedObjectDeletion an undecodable object can be deleted, alone and only when it is undecodable', async (t) => {
  const cluster = await startEtcdCluster({ size: 1 });
  const server = await startApiServer({ args: [`--etcd-servers=${cluster.endpoints()[0]}`, '--feature-gates=AllowUnsafeMalformedObjectDeletion=true'] });
  const raw = new Etcd3({ hosts: cluster.endpoints() });
  t.teardown(async () => {
    raw.close();
    await server.stop();
    await cluster.close();
  });
  const base = `${server.url}/api/v1/namespaces/default/configmaps`;
  t.is((await call(server.admin, 'POST', base, { metadata: { name: 'good' } })).status, 201);
  await raw.put(`${PREFIX}/core/configmaps/default/broken`).value('{"metadata": {"name": "broken"');
  const unsafe = { kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true };
  const combined = await call(server.admin, 'DELETE', `${base}/broken`, { ...unsafe, propagationPolicy: 'Background' });
  t.is(combined.status, 400, 'no other option may be combined with it');
  t.regex(combined.body?.message, /propagationPolicy/);
  const readable = await call(server.admin, 'DELETE', `${base}/good`, unsafe);
  t.is(readable.status, 400, 'a readable object is deleted normally, not unsafely');
  t.is((await call(server.admin, 'GET', `${base}/good`)).status, 200);
  // Upstream's extra authorization: delete alone is not enough, the verb
  // unsafe-delete-ignore-read-errors is needed too (admin, in system:masters, bypasses authz).
  const asAlice = { 'Impersonate-User': 'alice' };
  const rbac = `${server.url}/apis/rbac.authorization.svc.io/v1`;
  const role = (verbs: string[]) => ({ kind: 'ClusterRole', apiVersion: 'rbac.authorization.svc.io/v1', metadata: { name: 'cm-deleter' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }] });
  t.is((await call(server.admin, 'POST', `${rbac}/clusterroles`, role(['get', 'delete']))).status, 201);
  const binding = { kind: 'ClusterRoleBinding', apiVersion: 'rbac.authorization.svc.io/v1', metadata: { name: 'alice-deletes' }, roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'cm-deleter' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'alice' }] };
  t.is((await call(server.admin, 'POST', `${rbac}/clusterrolebindings`, binding)).status, 201);
  const denied = await eventuallyStatus(() => call(server.admin, 'DELETE', `${base}/broken`, unsafe, asAlice), 403, /unsafe-delete/);
  t.regex(denied.body?.message, /unsafe-delete-ignore-read-errors/);
  t.is(Number(await raw.getAll().prefix(`${PREFIX}/core/configmaps/default/broken`).count()), 1);
  const cr = await call(server.admin, 'GET', `${rbac}/clusterroles/cm-deleter`);
  t.is((await call(server.admin, 'PUT', `${rbac}/clusterroles/cm-deleter`, { ...role(['get', 'delete', 'unsafe-delete-ignore-read-errors']), metadata: cr.body.metadata })).status, 200);
  const del = await eventuallyStatus(() => call(server.admin, 'DELETE', `${base}/broken`, unsafe, asAlice), 200);
  t.is(del.status, 200, del.text);
  t.is(Number(await raw.getAll().prefix(`${PREFIX}/core/configmaps/default/broken`).count()), 0);
  t.is((await call(server.admin, 'GET', base)).status, 200, 'lists work again once it is gone');
});

/** RBAC reads roles through a watch: retries until the answer has the wanted status. */
async function eventuallyStatus(fn: () => Promise<JsonResponse>, status: number, message = /./): Promise<JsonResponse> {
  const end = Date.now() + 15_000;
  for (;;) {
    const r = await fn();
    if ((r.status === status && message.test(r.text)) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function eventuallyValue<T>(fn: () => T, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return fn();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
