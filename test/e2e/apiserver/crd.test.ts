/**
 * CustomResourceDefinitions against a real svc-apiserver, driven by stock kubectl 1.32 and the
 * Debian Python client's CustomObjectsApi: apply a CRD, then its objects; get with printer
 * columns; explain; patch (merge, json; strategic is 415); scale; server-side apply; get -w; a
 * deprecated version's warning; no protobuf (415/406, as upstream); delete the CRD and its objects.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl as kubectlRun, python, run } from '../../helpers/real-clients';

const CRD_FILE = join(repoRoot, 'test', 'fixtures', 'crds', 'widgets.yaml');
const PB = 'application/vnd.kubernetes.protobuf';
/** kubectl 1.27 among the Cloud SDK's versioned binaries (as k8s-io-groups.test.ts finds it). */
const KUBECTL_127 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.27';
let s: RunningApiServer;

test.before(async () => {
  s = await startApiServer();
  await kubectl(['apply', '-f', CRD_FILE]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.e2e.example.com']);
});
test.after.always(async () => {
  await s?.stop();
});

async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await kubectlRun(s.kubeconfig, args, { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}${r.stdout}`);
  return r.stdout + r.stderr;
}

async function kubectlFails(args: string[], input?: string): Promise<string> {
  const r = await kubectlRun(s.kubeconfig, args, { input });
  if (r.code === 0) throw new Error(`kubectl ${args.join(' ')} unexpectedly succeeded: ${r.stdout}`);
  return r.stderr;
}

const widget = (name: string, ns: string, spec: string) => `apiVersion: e2e.example.com/v1
kind: Widget
metadata:
  name: ${name}
  namespace: ${ns}
spec:
${spec}
`;

test.serial('objects: apply, get with printer columns, defaults, validation messages', async (t) => {
  await kubectl(['create', 'namespace', 'crd1']);
  t.regex(await kubectl(['apply', '-f', '-'], widget('a', 'crd1', '  color: red\n  tags: [x]')), /widget\.e2e\.example\.com\/a created/);
  const table = await kubectl(['get', 'widgets', '-n', 'crd1']);
  t.regex(table, /^NAME\s+REPLICAS\s+COLOR\s+AGE\n/);
  t.regex(table, /\na\s+1\s+red\s+\d+s\n/);
  t.regex(await kubectl(['get', 'wdg', 'a', '-n', 'crd1', '-o', 'jsonpath={.spec.replicas}']), /^1$/);
  t.regex(await kubectlFails(['apply', '-f', '-'], widget('b', 'crd1', '  color: purple')), /spec\.color: Unsupported value: "purple": supported values: "red", "blue", "green"/);
  t.regex(await kubectlFails(['apply', '-f', '-'], widget('b', 'crd1', '  color: red\n  replicas: -2')), /spec\.replicas: Invalid value: -2: spec\.replicas in body should be greater than or equal to 0/);
  t.regex(await kubectlFails(['apply', '-f', '-'], widget('b', 'crd1', '  color: red\n  replicas: two')), /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/);
  // Strict field validation (kubectl's default) refuses unknown fields; Ignore prunes them.
  t.regex(await kubectlFails(['create', '-f', '-'], widget('c', 'crd1', '  color: red\n  bogus: 1')), /unknown field "spec\.bogus"/);
  await kubectl(['create', '--validate=false', '-f', '-'], widget('c', 'crd1', '  color: red\n  bogus: 1'));
  t.is(await kubectl(['get', 'widget', 'c', '-n', 'crd1', '-o', 'jsonpath={.spec}']), '{"color":"red","replicas":1}');
});

test.serial('patch, scale, server-side apply, field selector on a selectable field', async (t) => {
  await kubectl(['patch', 'widget', 'a', '-n', 'crd1', '--type=merge', '-p', '{"spec":{"color":"blue"}}']);
  await kubectl(['patch', 'widget', 'a', '-n', 'crd1', '--type=json', '-p', '[{"op":"add","path":"/spec/tags/-","value":"y"}]']);
  t.regex(await kubectlFails(['patch', 'widget', 'a', '-n', 'crd1', '--type=strategic', '-p', '{"spec":{"replicas":2}}']), /application\/strategic-merge-patch\+json is not supported/);
  await kubectl(['scale', 'widget', 'a', '-n', 'crd1', '--replicas=4']);
  t.is(await kubectl(['get', 'widget', 'a', '-n', 'crd1', '-o', 'jsonpath={.spec.replicas} {.spec.color} {.spec.tags}']), '4 blue ["x","y"]');
  const applied = widget('s', 'crd1', '  color: green\n  ports:\n  - {name: http, port: 80}');
  t.regex(await kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], applied), /serverside-applied/);
  const other = widget('s', 'crd1', '  color: green\n  ports:\n  - {name: https, port: 443}');
  await kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], other);
  // A map list merges by key across managers (x-kubernetes-list-type: map).
  t.is(await kubectl(['get', 'widget', 's', '-n', 'crd1', '-o', 'jsonpath={.spec.ports[*].name}']), 'http https');
  t.regex(await kubectl(['get', 'widgets', '-n', 'crd1', '--field-selector', 'spec.color=green', '-o', 'name']), /^widget\.e2e\.example\.com\/s\n$/);
});

test.serial('get -w sees a change; explain reads the published schema', async (t) => {
  const watcher = spawn('/usr/bin/kubectl', ['--kubeconfig', s.kubeconfig, 'get', 'widgets', '-n', 'crd1', '-w', '-o', 'name'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const count = (name: string) => out.split('\n').filter((l) => l === `widget.e2e.example.com/${name}`).length;
  let out = '';
  const seen = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no event for the change: ${out}`)), 20_000);
    watcher.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // Listed once, then once more for the change.
      if (count('a') >= 2) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // Once the initial list is out (a, c and s), change one.
  for (let i = 0; i < 400 && !(count('a') && count('c') && count('s')); i++) await new Promise((r) => setTimeout(r, 50));
  await kubectl(['label', 'widget', 'a', '-n', 'crd1', 'seen=yes']);
  try {
    await seen;
  } finally {
    watcher.kill();
  }
  t.true(count('a') >= 2, out);
  const explain = await kubectl(['explain', 'widgets.spec.replicas']);
  t.regex(explain, /FIELD: replicas <integer>/);
  t.regex(explain, /How many\./);
  // The CRD's own schema is published, with its constraints (an enum here).
  t.regex(await kubectl(['explain', 'widgets.spec.color']), /ENUM:\s+red\s+blue\s+green/);
  // kubectl 1.27 reads /openapi/v2 in protobuf: the CRD's schema converts to Swagger 2.0 and gnostic's message.
  const old = await run(KUBECTL_127, ['--kubeconfig', s.kubeconfig, 'explain', 'widgets.spec']);
  t.is(old.code, 0, old.stderr);
  t.regex(old.stdout, /replicas\s+<integer>\s+How many\./);
});

test.serial('a deprecated version answers with its warning and converts apiVersion', async (t) => {
  const out = await kubectl(['get', 'widgets.v1beta1.e2e.example.com', 'a', '-n', 'crd1', '-o', 'jsonpath={.apiVersion}']);
  t.regex(out, /e2e\.example\.com\/v1beta1/);
  t.regex(out, /Warning: e2e\.example\.com\/v1beta1 Widget is deprecated; use e2e\.example\.com\/v1/);
  // The same signals as a deprecated built-in: the Warning on errors too, and the metric.
  const missing = await kubectlFails(['get', 'widgets.v1beta1.e2e.example.com', 'nope', '-n', 'crd1']);
  t.regex(missing, /Warning: e2e\.example\.com\/v1beta1 Widget is deprecated; use e2e\.example\.com\/v1/);
  t.regex(missing, /NotFound|not found/);
  const metrics = await kubectl(['get', '--raw', '/metrics']);
  t.regex(metrics, /apiserver_requested_deprecated_apis\{group="e2e\.example\.com",version="v1beta1",resource="widgets",subresource="",removed_release=""\} [1-9]/);
});

test.serial('custom resources have no protobuf form: 406 for a protobuf-only Accept, 415 for a protobuf body', async (t) => {
  const path = `${s.url}/apis/e2e.example.com/v1/namespaces/crd1/widgets`;
  const get = await request(`${path}/a`, { dispatcher: s.admin, headers: { accept: PB } });
  await get.body.text();
  t.is(get.statusCode, 406);
  const both = await request(`${path}/a`, { dispatcher: s.admin, headers: { accept: `${PB}, application/json` } });
  t.is(both.headers['content-type'], 'application/json');
  await both.body.text();
  const post = await request(path, { method: 'POST', dispatcher: s.admin, body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'content-type': PB } });
  await post.body.text();
  t.is(post.statusCode, 415);
});

test.serial('the Python client: CustomObjectsApi create, list, patch status, delete', async (t) => {
  const r = await python<{ names: string[]; replicas: number; status: number; left: string[] }>(
    s.kubeconfig,
    `
api = client.CustomObjectsApi()
g, v, p = "e2e.example.com", "v1", "widgets"
api.create_namespaced_custom_object(g, v, "crd1", p, {"apiVersion": "e2e.example.com/v1", "kind": "Widget", "metadata": {"name": "py"}, "spec": {"color": "red"}})
names = sorted(o["metadata"]["name"] for o in api.list_namespaced_custom_object(g, v, "crd1", p)["items"])
got = api.get_namespaced_custom_object(g, v, "crd1", p, "py")
st = api.patch_namespaced_custom_object_status(g, v, "crd1", p, "py", {"status": {"replicas": 3}})
api.delete_namespaced_custom_object(g, v, "crd1", p, "py")
left = sorted(o["metadata"]["name"] for o in api.list_cluster_custom_object(g, v, p)["items"])
print(json.dumps({"names": names, "replicas": got["spec"]["replicas"], "status": st["status"]["replicas"], "left": left}))
`,
  );
  t.deepEqual(r, { names: ['a', 'c', 'py', 's'], replicas: 1, status: 3, left: ['a', 'c', 's'] });
});

test.serial('the Python dynamic client discovers the kind and reads, patches and deletes through it', async (t) => {
  const r = await python<{ color: string; kinds: string[] }>(
    s.kubeconfig,
    `
from kubernetes import dynamic
dyn = dynamic.DynamicClient(client.ApiClient())
widgets = dyn.resources.get(api_version="e2e.example.com/v1", kind="Widget")
widgets.create(body={"apiVersion": "e2e.example.com/v1", "kind": "Widget", "metadata": {"name": "dyn"}, "spec": {"color": "blue"}}, namespace="crd1")
widgets.patch(name="dyn", namespace="crd1", body={"spec": {"color": "green"}}, content_type="application/merge-patch+json")
got = widgets.get(name="dyn", namespace="crd1")
kinds = sorted(set(i.kind for i in widgets.get(namespace="crd1").items))
widgets.delete(name="dyn", namespace="crd1")
print(json.dumps({"color": got.spec.color, "kinds": kinds}))
`,
  );
  t.deepEqual(r, { color: 'green', kinds: ['Widget'] });
});

test.serial('@kubernetes/client-node: ApiextensionsV1Api reads the CRD, CustomObjectsApi creates, reads and deletes', async (t) => {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfig);
  const crd = await kc.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: 'widgets.e2e.example.com' });
  t.true(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  const target = { group: 'e2e.example.com', version: 'v1', namespace: 'crd1', plural: 'widgets' };
  await objects.createNamespacedCustomObject({ ...target, body: { apiVersion: 'e2e.example.com/v1', kind: 'Widget', metadata: { name: 'js' }, spec: { color: 'red' } } });
  const read = (await objects.getNamespacedCustomObject({ ...target, name: 'js' })) as { spec: { replicas: number } };
  t.is(read.spec.replicas, 1);
  await objects.deleteNamespacedCustomObject({ ...target, name: 'js' });
  const left = (await objects.listNamespacedCustomObject(target)) as { items: Array<{ metadata: { name: string } }> };
  t.false(left.items.some((i) => i.metadata.name === 'js'));
});

test.serial('RBAC grants custom resources like any resource; the garbage collector deletes custom objects whose owner is gone', async (t) => {
  await kubectl(['create', 'role', 'widget-reader', '-n', 'crd1', '--verb=get,list', '--resource=widgets.e2e.example.com']);
  await kubectl(['create', 'rolebinding', 'ann-widgets', '-n', 'crd1', '--role=widget-reader', '--user=ann']);
  t.regex(await kubectl(['get', 'widgets', '-n', 'crd1', '--as=ann', '-o', 'name']), /widget\.e2e\.example\.com\/a/);
  t.regex(await kubectlFails(['delete', 'widget', 'a', '-n', 'crd1', '--as=ann']), /User "ann" cannot delete resource "widgets" in API group "e2e\.example\.com" in the namespace "crd1"/);
  // A Widget owned by a ConfigMap goes with it.
  await kubectl(['create', 'configmap', 'owner', '-n', 'crd1']);
  const uid = await kubectl(['get', 'configmap', 'owner', '-n', 'crd1', '-o', 'jsonpath={.metadata.uid}']);
  const owned = `apiVersion: e2e.example.com/v1
kind: Widget
metadata:
  name: owned
  namespace: crd1
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: ${uid}}]
spec: {color: red}
`;
  await kubectl(['apply', '-f', '-'], owned);
  await kubectl(['delete', 'configmap', 'owner', '-n', 'crd1']);
  await kubectl(['wait', '--for=delete', '--timeout=30s', 'widget/owned', '-n', 'crd1']);
  t.regex(await kubectlFails(['get', 'widget', 'owned', '-n', 'crd1']), /widgets\.e2e\.example\.com "owned" not found/);
});

test.serial('deleting the CRD deletes its objects, then the type is no longer served', async (t) => {
  await kubectl(['delete', 'crd', 'widgets.e2e.example.com', '--timeout=60s']);
  // kubectl's cached discovery may still list the type: then the list itself is the 404.
  t.regex(await kubectlFails(['get', 'widgets', '-A']), /the server doesn't have a resource type "widgets"|the server could not find the requested resource/);
  const list = await request(`${s.url}/apis/e2e.example.com/v1/widgets`, { dispatcher: s.admin });
  await list.body.text();
  t.is(list.statusCode, 404);
  // The objects are gone from storage too: a CRD created again starts empty.
  await kubectl(['apply', '-f', CRD_FILE]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/widgets.e2e.example.com']);
  t.regex(await kubectl(['get', 'widgets', '-A']), /No resources found/);
});
