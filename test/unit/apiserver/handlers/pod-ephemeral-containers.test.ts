import test from 'ava';
import { handlePodEphemeralContainers } from '../../../../apiserver/handlers/pod-ephemeral-containers';
import { admin, openStore, pod, type StoreFixture } from '../store/fixture';
import { call } from './fake-http';

const EPH = '/api/v1/namespaces/default/pods/web/ephemeralcontainers';
const smp = { 'content-type': 'application/strategic-merge-patch+json' };
const debug = { name: 'debug', image: 'registry.example/busybox:1', targetContainerName: 'app' };

async function withPod(body: (f: StoreFixture, rv: string) => Promise<void>): Promise<void> {
  const f = await openStore();
  try {
    const p = await f.store.create(f.type('pods'), 'default', pod('web', { nodeName: 'n1' }), admin);
    await body(f, p.metadata.resourceVersion!);
  } finally {
    await f.close();
  }
}

test('PATCH adds an ephemeral container; everything else in the patch is dropped', (t) =>
  withPod(async (f) => {
    const res = await call(f, handlePodEphemeralContainers, 'PATCH', EPH, {
      body: { metadata: { labels: { sneaky: 'yes' } }, spec: { ephemeralContainers: [debug], nodeName: 'n2' } },
      headers: smp,
    });
    t.is(res.statusCode, 200);
    t.is(res.body.spec.ephemeralContainers[0].name, 'debug');
    t.is(res.body.spec.nodeName, 'n1');
    t.is(res.body.metadata.labels, undefined);
    const stored = await f.store.get(f.type('pods'), 'default', 'web');
    t.is((stored.spec as { ephemeralContainers: unknown[] }).ephemeralContainers.length, 1);
  }));

test('an existing ephemeral container may not change (422); a stale pinned version is 409; GET answers the pod', (t) =>
  withPod(async (f, rv) => {
    await call(f, handlePodEphemeralContainers, 'PATCH', EPH, { body: { spec: { ephemeralContainers: [debug] } }, headers: smp });
    const changed = await call(f, handlePodEphemeralContainers, 'PATCH', EPH, {
      body: { spec: { ephemeralContainers: [{ ...debug, image: 'registry.example/busybox:2' }] } },
      headers: smp,
    });
    t.is(changed.statusCode, 422);
    t.like(changed.body, { kind: 'Status', reason: 'Invalid', code: 422 });
    const stale = await call(f, handlePodEphemeralContainers, 'PATCH', EPH, {
      body: { metadata: { resourceVersion: rv }, spec: { ephemeralContainers: [debug, { ...debug, name: 'second' }] } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    t.is(stale.statusCode, 409);
    const got = await call(f, handlePodEphemeralContainers, 'GET', EPH);
    t.is(got.statusCode, 200);
    t.is(got.body.kind, 'Pod');
    t.deepEqual(got.body.spec.ephemeralContainers.map((c: { name: string }) => c.name), ['debug']);
  }));

test('other verbs are 405; a missing pod is 404', async (t) => {
  const f = await openStore();
  try {
    const del = await call(f, handlePodEphemeralContainers, 'DELETE', EPH);
    t.is(del.statusCode, 405);
    t.is(del.body.reason, 'MethodNotAllowed');
    const missing = await call(f, handlePodEphemeralContainers, 'PATCH', EPH, { body: { spec: { ephemeralContainers: [debug] } }, headers: smp });
    t.is(missing.statusCode, 404);
    t.is(missing.body.message, 'pods "web" not found');
  } finally {
    await f.close();
  }
});

test('server-side apply adds an ephemeral container under an ephemeralcontainers entry; the rest of the configuration is dropped', (t) =>
  withPod(async (f) => {
    const config = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { sneaky: 'yes' } },
      spec: { ephemeralContainers: [debug], containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    };
    const res = await call(f, handlePodEphemeralContainers, 'PATCH', `${EPH}?fieldManager=debugger`, { raw: JSON.stringify(config), headers: { 'content-type': 'application/apply-patch+yaml' } });
    t.is(res.statusCode, 200, res.text);
    t.deepEqual(
      res.body.spec.ephemeralContainers.map((c: { name: string }) => c.name),
      ['debug'],
    );
    t.is(res.body.metadata.labels, undefined);
    const entry = res.body.metadata.managedFields.find((e: { manager: string }) => e.manager === 'debugger');
    t.like(entry, { operation: 'Apply', subresource: 'ephemeralcontainers' });
    // It owns only what this sub-resource writes (upstream's include filter), not the labels or containers it sent.
    t.deepEqual(Object.keys(entry.fieldsV1), ['f:spec']);
    t.deepEqual(Object.keys(entry.fieldsV1['f:spec']), ['f:ephemeralContainers']);
    t.deepEqual(Object.keys(entry.fieldsV1['f:spec']['f:ephemeralContainers']), ['k:{"name":"debug"}']);
  }));
