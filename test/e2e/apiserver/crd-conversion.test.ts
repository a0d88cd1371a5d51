/**
 * CRD conversion webhooks against a real svc-apiserver (issue 22): the webhook is a separate
 * Node process (test/helpers/conversion-webhook-server.ts) serving HTTPS with a certificate of a
 * test CA given as caBundle, so TLS is verified for real. A Backend CRD has v1 (spec.host,
 * spec.port; storage) and v2 (spec.endpoint "host:port"): created at v1 with kubectl, read at v2
 * with kubectl and the Python client, watched at v2, listed with objects written at both versions
 * (and, once the storage version moves to v2, stored at both), each list converted in one review.
 * A webhook answering Failure or a wrong uid makes reads at v2 a 500 naming the conversion.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startHookProcess } from '../../helpers/hook-process';
import { kubectl, python } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

let s: RunningApiServer;
let hook: ChildProcess;
let port = 0;
let caBundle = '';
let reviews: Array<{ path: string; review: string; to: string; names: string[] }> = [];
const dir = mkdtempSync(join(tmpdir(), 'svc-conversion-'));

test.before(async () => {
  const h = await startHookProcess<(typeof reviews)[number]>('conversion-webhook-server.js', dir, 'conversion');
  hook = h.process;
  port = h.port;
  caBundle = h.caBundle;
  reviews = h.records;
  s = await startApiServer();
});

test.after.always(async () => {
  hook?.kill('SIGTERM');
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function k(args: string[], input?: string): Promise<string> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 60_000, input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function fails(args: string[]): Promise<string> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 60_000 });
  if (r.code === 0) throw new Error(`kubectl ${args.join(' ')} unexpectedly succeeded: ${r.stdout}`);
  return r.stderr;
}

const v1Schema = { type: 'object', properties: { spec: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } } } };
const v2Schema = { type: 'object', properties: { spec: { type: 'object', properties: { endpoint: { type: 'string' } } } } };

function backendCrd(group: string, path: string, storage: 'v1' | 'v2' = 'v1'): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `backends.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'backends', singular: 'backend', kind: 'Backend' },
      versions: [
        { name: 'v1', served: true, storage: storage === 'v1', schema: { openAPIV3Schema: v1Schema } },
        { name: 'v2', served: true, storage: storage === 'v2', schema: { openAPIV3Schema: v2Schema } },
      ],
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle }, conversionReviewVersions: ['v1'] } },
    },
  });
}

const v1Backend = (group: string, name: string, host: string, p: number) => JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Backend', metadata: { name, namespace: 'conv' }, spec: { host, port: p } });
const v2Backend = (group: string, name: string, endpoint: string) => JSON.stringify({ apiVersion: `${group}/v2`, kind: 'Backend', metadata: { name, namespace: 'conv' }, spec: { endpoint } });

async function install(group: string, path: string): Promise<void> {
  await k(['apply', '-f', '-'], backendCrd(group, path));
  await k(['wait', '--for=condition=Established', '--timeout=30s', `crd/backends.${group}`]);
  // The types are registered by the CRD loop: wait until v2 is served.
  await eventually(`backends.v2.${group} served`, async () => ((await kubectl(s.kubeconfig, ['get', `backends.v2.${group}`, '-n', 'conv'], { timeoutMs: 30_000 })).code === 0 ? true : undefined), 30_000, 200);
}

test.serial('created at v1 with kubectl, read at v2 with kubectl and the Python client; a list is one review', async (t) => {
  const g = 'conv.example.com';
  await k(['create', 'namespace', 'conv']);
  await install(g, '/convert');
  await k(['create', '-f', '-'], v1Backend(g, 'a', 'db', 5432));
  await k(['create', '-f', '-'], v2Backend(g, 'b', 'cache:6379'));
  const a2 = JSON.parse(await k(['get', `backends.v2.${g}`, 'a', '-n', 'conv', '-o', 'json']));
  t.is(a2.apiVersion, `${g}/v2`);
  t.deepEqual(a2.spec, { endpoint: 'db:5432' });
  // Written at v2, stored at v1: read back at v1.
  const b1 = JSON.parse(await k(['get', `backends.v1.${g}`, 'b', '-n', 'conv', '-o', 'json']));
  t.deepEqual(b1.spec, { host: 'cache', port: 6379 });

  const before = reviews.length;
  const py = await python<{ items: Array<[string, string, string]>; one: string }>(
    s.kubeconfig,
    `
api = client.CustomObjectsApi()
lst = api.list_namespaced_custom_object("${g}", "v2", "conv", "backends")
one = api.get_namespaced_custom_object("${g}", "v2", "conv", "backends", "a")
print(json.dumps({"items": [[o["metadata"]["name"], o["apiVersion"], o["spec"]["endpoint"]] for o in lst["items"]], "one": one["spec"]["endpoint"]}))
`,
  );
  t.deepEqual(py.items, [
    ['a', `${g}/v2`, 'db:5432'],
    ['b', `${g}/v2`, 'cache:6379'],
  ]);
  t.is(py.one, 'db:5432');
  // The list's two objects went in one review, the get in another.
  const listed = reviews.slice(before).filter((r) => r.names.length === 2);
  t.is(listed.length, 1);
  t.like(listed[0], { path: '/convert', review: 'apiextensions.k8s.io/v1', to: `${g}/v2` });
});

test.serial('a watch at v2 sends converted events for writes at v1', async (t) => {
  const g = 'conv.example.com';
  // The list's own resourceVersion (kubectl -o json prints a List without one).
  const listed = await request(`${s.url}/apis/${g}/v2/namespaces/conv/backends`, { dispatcher: s.admin });
  const list = (await listed.body.json()) as { metadata: { resourceVersion: string }; items: Array<{ apiVersion: string }> };
  t.true(list.items.every((o) => o.apiVersion === `${g}/v2`));
  const rv = list.metadata.resourceVersion;
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const res = await request(`${s.url}/apis/${g}/v2/namespaces/conv/backends?watch=1&resourceVersion=${rv}&timeoutSeconds=30`, { dispatcher: s.admin, signal: ac.signal });
  t.is(res.statusCode, 200);
  await k(['patch', `backends.v1.${g}`, 'a', '-n', 'conv', '--type=merge', '-p', '{"spec":{"port":15432}}']);
  let text = '';
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString();
    if (text.includes('\n')) break;
  }
  const ev = JSON.parse(text.slice(0, text.indexOf('\n')));
  t.is(ev.type, 'MODIFIED');
  t.is(ev.object.apiVersion, `${g}/v2`);
  t.deepEqual(ev.object.spec, { endpoint: 'db:15432' });
});

test.serial('the storage version moves to v2: objects stored at both versions list at either', async (t) => {
  const g = 'conv.example.com';
  await k(['apply', '-f', '-'], backendCrd(g, '/convert', 'v2'));
  // Until the CRD loop serves the new storage version, a write may still be stored at v1: wait for
  // storedVersions to list v2, then for a write to be stored there (read at v2 without a review).
  await eventually('v2 in storedVersions', async () => ((await k(['get', 'crd', `backends.${g}`, '-o', 'jsonpath={.status.storedVersions}'])).includes('v2') ? true : undefined), 30_000, 200);
  let n = 0;
  const last = await eventually('writes stored at v2', async () => {
    const name = `c${n++}`;
    await k(['create', '-f', '-'], v2Backend(g, name, `new:${n}`));
    const before = reviews.length;
    await k(['get', `backends.v2.${g}`, name, '-n', 'conv', '-o', 'name']);
    return reviews.slice(before).length === 0 ? name : undefined;
  }, 30_000, 200);
  const v1List = JSON.parse(await k(['get', `backends.v1.${g}`, '-n', 'conv', '-o', 'json']));
  t.true(v1List.items.every((o: { apiVersion: string; spec: { host?: string } }) => o.apiVersion === `${g}/v1` && typeof o.spec.host === 'string'));
  const before = reviews.length;
  const v2List = JSON.parse(await k(['get', `backends.v2.${g}`, '-n', 'conv', '-o', 'json']));
  const endpoints = new Map<string, string>(v2List.items.map((o: { metadata: { name: string }; spec: { endpoint: string } }) => [o.metadata.name, o.spec.endpoint]));
  t.is(endpoints.get('a'), 'db:15432');
  t.is(endpoints.get('b'), 'cache:6379');
  // Only the objects still stored at v1 were sent (a, b, and any write that beat the switch), in one review.
  const sent = reviews.slice(before);
  t.is(sent.length, 1);
  t.true(sent[0].names.includes('a') && sent[0].names.includes('b'), sent[0].names.join());
  t.false(sent[0].names.includes(last));
});

test.serial('a webhook that refuses, or answers another uid, makes reads at v2 a 500 naming the conversion', async (t) => {
  for (const [group, path, message] of [
    ['fail.example.com', '/fail', /conversion webhook for fail\.example\.com\/v1, Kind=Backend failed: the test webhook refuses to convert/],
    ['uid.example.com', '/wrong-uid', /conversion webhook for uid\.example\.com\/v1, Kind=Backend failed: expected response\.uid="[0-9a-f-]+", got "not-the-request-uid"/],
  ] as const) {
    await install(group, path);
    await k(['create', '-f', '-'], v1Backend(group, 'x', 'h', 1));
    const err = await fails(['get', `backends.v2.${group}`, 'x', '-n', 'conv']);
    t.regex(err, /InternalError|Internal error occurred/);
    t.regex(err, message);
    // The storage version needs no conversion.
    t.regex(await k(['get', `backends.v1.${group}`, 'x', '-n', 'conv', '-o', 'name']), /backend\.uid|backend\.fail/);
  }
});
