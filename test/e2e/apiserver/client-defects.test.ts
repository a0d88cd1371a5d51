/**
 * Issue 17, item 5: defects that stock clients found, each shown with the client that found it,
 * against a real svc-apiserver and a real svc-node on the CRI simulator: kubectl 1.32
 * (delete --dry-run=server, streaming lists, delete -f of a namespace and its pods, logs of an
 * ephemeral container), the Debian Python client (VersionApi, Nodes, follow=True logs,
 * orphan_dependents=True) and ruby kubeclient (watches through the legacy /watch/ paths).
 * Every client call is bounded by a timeout; watches by timeoutSeconds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { stringify } from 'yaml';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { kubectl, python, ruby } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';
import { runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';

const NODE = 'e2e-clients';
let env: { api: RunningApiServer; node: NodeUnderTest; dir: string } | undefined;
function e(): NonNullable<typeof env> {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-clients-e2e-'));
  const api = await startApiServer();
  try {
    const node = await startNode(api, path.join(dir, 'node'), NODE);
    env = { api, node, dir };
    await runPod(api, NODE, 'web');
  } catch (err) {
    await env?.node.agent.stop('SIGKILL');
    await api.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

const configMap = (name: string, ns = 'default') => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: 'b' } });
const CMS = () => `${e().api.url}/api/v1/namespaces/default/configmaps`;

test.serial('kubectl delete --dry-run=server (DeleteOptions dryRun in the body) keeps the object; other body options count too', async (t) => {
  const { api } = e();
  t.is((await kubectl(api.kubeconfig, ['create', '-f', '-'], { input: configMap('dry') })).code, 0);
  const dry = await kubectl(api.kubeconfig, ['delete', 'cm', 'dry', '--dry-run=server']);
  t.is(dry.code, 0, dry.stderr);
  t.regex(dry.stdout, /configmap "dry" deleted \(server dry run\)/);
  const after = await call(api.admin, 'GET', `${CMS()}/dry`);
  t.is(after.status, 200, 'still there');
  t.is(after.body.metadata.deletionTimestamp, undefined);
  // The same body on a collection delete, and a body that contradicts the query.
  const collection = await call(api.admin, 'DELETE', CMS(), { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] });
  t.is(collection.status, 200, collection.text);
  t.is((await call(api.admin, 'GET', `${CMS()}/dry`)).status, 200);
  const contradiction = await call(api.admin, 'DELETE', `${CMS()}/dry?gracePeriodSeconds=0`, { gracePeriodSeconds: 5 });
  t.is(contradiction.status, 400);
  t.regex(contradiction.body.message, /^gracePeriodSeconds: Invalid value: "0": the query parameter contradicts the request body's DeleteOptions \(5\)$/);
  const real = await kubectl(api.kubeconfig, ['delete', 'cm', 'dry']);
  t.is(real.code, 0, real.stderr);
  t.is((await call(api.admin, 'GET', `${CMS()}/dry`)).status, 404);
});

test.serial('kubectl with client-go streaming lists (WatchListClient) sees the end of the initial events (k8s.io/initial-events-end)', async (t) => {
  const { api } = e();
  t.is((await kubectl(api.kubeconfig, ['create', '-f', '-'], { input: configMap('listed') })).code, 0);
  const r = await kubectl(api.kubeconfig, ['wait', '--for=jsonpath={.data.a}=b', 'cm/listed', '--timeout=20s', '-v=6'], { env: { KUBE_FEATURE_WatchListClient: 'true' } });
  t.regex(r.stderr, /sendInitialEvents=true/, 'kubectl used a streaming list');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /configmap\/listed condition met/);
});

test.serial('kubectl delete -f of a file that lists its namespace first deletes the namespace, its pod and its config map without NotFound', async (t) => {
  const { api, dir } = e();
  const file = path.join(dir, 'app.yaml');
  writeFileSync(
    file,
    [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'teardown' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'teardown' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, containers: [{ name: 'web', image: 'nginx' }] } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf', namespace: 'teardown' }, data: { a: 'b' } },
    ]
      .map((o) => stringify(o))
      .join('---\n'),
  );
  const applied = await kubectl(api.kubeconfig, ['apply', '-f', file]);
  t.is(applied.code, 0, applied.stderr);
  await eventually('the pod running', async () => ((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/teardown/pods/web`)).body?.status?.phase === 'Running' ? true : undefined), 60_000);
  const deleted = await kubectl(api.kubeconfig, ['delete', '-f', file, '--timeout=90s'], { timeoutMs: 100_000 });
  t.is(deleted.code, 0, deleted.stderr);
  t.notRegex(deleted.stderr, /NotFound/);
  t.regex(deleted.stdout, /namespace "teardown" deleted\npod "web" deleted\nconfigmap "conf" deleted/);
  t.is((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/teardown`)).status, 404);
});

/** Reads a watch stream until `until` holds for an event (or the stream ends); answers the events. */
async function watchEvents(api: RunningApiServer, url: string, until: (ev: any) => boolean): Promise<any[]> {
  const res = await request(url, { dispatcher: api.admin });
  const events: any[] = [];
  let buf = '';
  for await (const chunk of res.body) {
    buf += String(chunk);
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      events.push(ev);
      if (until(ev)) {
        res.body.destroy();
        return events;
      }
    }
  }
  return events;
}

test.serial("deleting a namespace deletes its pods with their grace period: Terminating until the node confirms", async (t) => {
  const { api } = e();
  t.is((await call(api.admin, 'POST', `${api.url}/api/v1/namespaces`, { metadata: { name: 'graceful' } })).status, 201);
  const pods = `${api.url}/api/v1/namespaces/graceful/pods`;
  await eventually('the default service account', async () => ((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/graceful/serviceaccounts/default`)).status === 200 ? true : undefined));
  const created = await call(api.admin, 'POST', pods, { metadata: { name: 'p' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 7, containers: [{ name: 'c', image: 'busybox' }] } });
  t.is(created.status, 201, created.text);
  await eventually('the pod running', async () => ((await call(api.admin, 'GET', `${pods}/p`)).body?.status?.phase === 'Running' ? true : undefined), 60_000);
  const rv = (await call(api.admin, 'GET', pods)).body.metadata.resourceVersion;
  const seen = watchEvents(api, `${pods}?watch=1&resourceVersion=${rv}&timeoutSeconds=90`, (ev) => ev.type === 'DELETED');
  const del = await kubectl(api.kubeconfig, ['delete', 'namespace', 'graceful', '--wait=false']);
  t.is(del.code, 0, del.stderr);
  const events = await seen;
  t.is(events.at(-1)?.type, 'DELETED', JSON.stringify(events.map((ev) => ev.type)));
  const terminating = events.find((ev) => ev.type === 'MODIFIED' && ev.object.metadata.deletionTimestamp);
  t.truthy(terminating, `the pod went Terminating before it was removed: ${JSON.stringify(events.map((ev) => [ev.type, ev.object.metadata.deletionTimestamp]))}`);
  t.is(terminating?.object.metadata.deletionGracePeriodSeconds, 7);
  await eventually('the namespace gone', async () => ((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/graceful`)).status === 404 ? true : undefined), 60_000);
});

test.serial('kubectl logs serves an ephemeral container (kubectl logs pod -c debugger after kubectl debug)', async (t) => {
  const { api } = e();
  const debug = await kubectl(api.kubeconfig, ['debug', 'web', '--image=busybox', '-c', 'debugger', '--profile=general', '--', 'sh', '-c', 'echo hi']);
  t.is(debug.code, 0, debug.stderr);
  await eventually('the ephemeral container running', async () => {
    const pod = (await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/pods/web`)).body;
    return pod?.status?.ephemeralContainerStatuses?.find((s: any) => s.name === 'debugger')?.state?.running ? true : undefined;
  }, 60_000);
  const logs = await kubectl(api.kubeconfig, ['logs', 'web', '-c', 'debugger']);
  t.is(logs.code, 0, logs.stderr);
  const wrong = await kubectl(api.kubeconfig, ['logs', 'web', '-c', 'nope']);
  t.not(wrong.code, 0);
  t.regex(wrong.stderr, /container nope is not valid for pod web/);
});

test.serial("the Python client's VersionApi reads /version, and CoreV1Api reads Nodes (nodeInfo.kubeProxyVersion present)", async (t) => {
  const { api } = e();
  const got = await python(
    api.kubeconfig,
    [
      'v = client.VersionApi().get_code()',
      'core = client.CoreV1Api()',
      'nodes = core.list_node()',
      `n = core.read_node("${NODE}")`,
      'print(json.dumps({"version": v.to_dict(), "nodes": [x.metadata.name for x in nodes.items], "kubeProxyVersion": n.status.node_info.kube_proxy_version, "kubelet": n.status.node_info.kubelet_version}))',
    ].join('\n'),
  );
  t.regex(got.version.git_version, /^v\d+\.\d+\.\d+/);
  t.regex(got.version.build_date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  for (const k of ['git_commit', 'git_tree_state', 'go_version', 'compiler', 'platform', 'major', 'minor']) t.is(typeof got.version[k], 'string', k);
  t.deepEqual(got.nodes, [NODE]);
  t.is(got.kubeProxyVersion, '');
  t.regex(got.kubelet, /^v\d/);
});

test.serial('the Python client follows pod logs (follow=True) of a pod run by svc-node', async (t) => {
  const { api } = e();
  const got = await python(
    api.kubeconfig,
    [
      'core = client.CoreV1Api()',
      'r = core.read_namespaced_pod_log("web", "default", container="app", follow=True, _preload_content=False)',
      'status = r.status',
      'r.close()',
      'plain = core.read_namespaced_pod_log("web", "default", container="app", timestamps=True, previous=False)',
      'print(json.dumps({"status": status, "plain": plain}))',
    ].join('\n'),
  );
  t.is(got.status, 200);
  t.is(typeof got.plain, 'string');
});

test.serial('the Python client deleting with orphan_dependents=True (orphanDependents=True in the query) keeps the dependent', async (t) => {
  const { api } = e();
  const got = await python(
    api.kubeconfig,
    [
      'core = client.CoreV1Api()',
      'owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner"}, "data": {"a": "b"}})',
      'ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}',
      'core.create_namespaced_config_map("default", {"metadata": {"name": "dependent", "ownerReferences": [ref]}, "data": {"a": "b"}})',
      'core.delete_namespaced_config_map("owner", "default", orphan_dependents=True)',
      'print(json.dumps({"uid": owner.metadata.uid}))',
    ].join('\n'),
  );
  t.truthy(got.uid);
  await eventually('the owner gone', async () => ((await call(e().api.admin, 'GET', `${CMS()}/owner`)).status === 404 ? true : undefined));
  const dependent = await eventually('the dependent orphaned (kept, without its owner reference)', async () => {
    const r = await call(api.admin, 'GET', `${CMS()}/dependent`);
    if (r.status === 404) throw new Error('the dependent was deleted');
    return (r.body.metadata.ownerReferences ?? []).length === 0 ? r.body : undefined;
  });
  t.is(dependent.metadata.name, 'dependent');
});

test.serial('ruby kubeclient watches through the legacy /watch/ paths: a namespace, one object, a cluster-scoped type', async (t) => {
  const { api } = e();
  const got = await ruby(
    api.url,
    api.dataDir,
    [
      'client.create_config_map(Kubeclient::Resource.new(metadata: { name: "rb", namespace: "default" }, data: { a: "b" }))',
      'seen = []',
      'w = client.watch_config_maps(namespace: "default", resource_version: "0", timeout_seconds: 20)',
      'w.each { |ev| seen << [ev.type, ev.object.metadata.name]; break if ev.object.metadata.name == "rb" }',
      'w.finish',
      'one = nil',
      'w = client.watch_config_maps(namespace: "default", name: "rb", timeout_seconds: 20)',
      'w.each { |ev| one = [ev.type, ev.object.metadata.name]; break }',
      'w.finish',
      'node = nil',
      'w = client.watch_nodes(timeout_seconds: 20)',
      'w.each { |ev| node = [ev.type, ev.object.metadata.name]; break }',
      'w.finish',
      'puts JSON.dump({ seen: seen, one: one, node: node })',
    ].join('\n'),
  );
  t.deepEqual(got.seen.at(-1), ['ADDED', 'rb']);
  t.deepEqual(got.one, ['ADDED', 'rb']);
  t.deepEqual(got.node, ['ADDED', NODE]);
  // The legacy paths are served for GET only, as upstream's.
  const post = await call(api.admin, 'POST', `${api.url}/api/v1/watch/namespaces/default/configmaps`, { metadata: { name: 'x' } });
  t.is(post.status, 405, post.text);
});
