/**
 * Server-side apply with real clients against a real svc-apiserver (issue 18): kubectl apply
 * --server-side (create, update, a second field manager's conflict, --force-conflicts, the
 * upgrade from client-side apply and back, --dry-run=server), kubectl 1.27 and 1.33 as well, the
 * Debian Python client's dynamic server_side_apply and ruby kubeclient's apply_config_map. Every
 * client runs as a process with a timeout; the expected managedFields are upstream's for the same
 * sequence (times left out: they are the server's clock).
 */
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl, python, ruby, run } from '../../helpers/real-clients';

const SDK = '/usr/lib/google-cloud-sdk/bin';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

let s: RunningApiServer;
let dir: string;

test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-ssa-'));
});
test.after.always(async () => {
  await s?.stop();
});

/** A ConfigMap manifest in a file of its own. */
function manifest(name: string, value: string, extra = ''): string {
  const file = join(dir, `${name}-${value}.yaml`);
  writeFileSync(file, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    app: demo\ndata:\n  key: ${value}\n${extra}`);
  return file;
}

async function get(name: string): Promise<any> {
  const res = await request(`${s.url}/api/v1/namespaces/default/configmaps/${name}`, { dispatcher: s.admin });
  const text = await res.body.text();
  return res.statusCode === 200 ? JSON.parse(text) : undefined;
}

/** managedFields without their times: [manager, operation, fieldsV1]. */
const owners = (obj: any) => obj.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.fieldsV1]);

test.serial('kubectl apply --server-side: create, update, a conflict with another field manager, --force-conflicts', async (t) => {
  const created = await kubectl(s.kubeconfig, ['apply', '--server-side', '-f', manifest('ssa', 'one')]);
  t.is(created.code, 0, created.stderr);
  t.is(created.stdout.trim(), 'configmap/ssa serverside-applied');
  const mine = { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } };
  t.deepEqual(owners(await get('ssa')), [['kubectl', 'Apply', mine]]);
  t.is((await kubectl(s.kubeconfig, ['apply', '--server-side', '-f', manifest('ssa', 'two')])).code, 0);
  t.is((await get('ssa')).data.key, 'two');

  const conflict = await kubectl(s.kubeconfig, ['apply', '--server-side', '--field-manager=other', '-f', manifest('ssa', 'three')]);
  t.is(conflict.code, 1);
  t.regex(conflict.stderr, /^error: Apply failed with 1 conflict: conflict with "kubectl": \.data\.key\nPlease review the fields above--they currently have other managers\./);
  t.is((await get('ssa')).data.key, 'two');

  const forced = await kubectl(s.kubeconfig, ['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', manifest('ssa', 'three')]);
  t.is(forced.code, 0, forced.stderr);
  const after = await get('ssa');
  t.is(after.data.key, 'three');
  // The label had the same value in both: shared. The data key moved to "other".
  t.deepEqual(owners(after), [
    ['kubectl', 'Apply', { 'f:metadata': { 'f:labels': { 'f:app': {} } } }],
    ['other', 'Apply', mine],
  ]);
});

test.serial('kubectl apply --server-side --dry-run=server answers and stores nothing; unknown fields are refused (kubectl asks for Strict)', async (t) => {
  const dry = await kubectl(s.kubeconfig, ['apply', '--server-side', '--dry-run=server', '-f', manifest('dry', 'one')]);
  t.is(dry.code, 0, dry.stderr);
  t.is(dry.stdout.trim(), 'configmap/dry serverside-applied (server dry run)');
  t.is(await get('dry'), undefined);
  const unknown = await kubectl(s.kubeconfig, ['apply', '--server-side', '-f', manifest('typo', 'one', 'datax:\n  a: b\n')]);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /strict decoding error: unknown field "datax"/);
  t.is(await get('typo'), undefined);
});

test.serial('from client-side apply to --server-side (its upgrade path) and back', async (t) => {
  t.is((await kubectl(s.kubeconfig, ['apply', '-f', manifest('csa', 'one')])).code, 0);
  t.deepEqual(owners(await get('csa')), [
    [
      'kubectl-client-side-apply',
      'Update',
      { 'f:data': { '.': {}, 'f:key': {} }, 'f:metadata': { 'f:annotations': { '.': {}, [`f:${LAST_APPLIED}`]: {} }, 'f:labels': { '.': {}, 'f:app': {} } } },
    ],
  ]);
  // A changed value: no conflict for kubectl, whose client-side apply set it; kubectl then moves the
  // client-side entry's fields to its own (a JSON patch of managedFields, which the server takes).
  const upgraded = await kubectl(s.kubeconfig, ['apply', '--server-side', '-f', manifest('csa', 'two')]);
  t.is(upgraded.code, 0, upgraded.stderr);
  const server = await get('csa');
  t.is(server.data.key, 'two');
  t.deepEqual(owners(server), [
    ['kubectl-last-applied', 'Apply', { 'f:metadata': { 'f:annotations': { [`f:${LAST_APPLIED}`]: {} } } }],
    ['kubectl', 'Apply', { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } }],
  ]);
  t.is(server.metadata.annotations[LAST_APPLIED], '{"apiVersion":"v1","data":{"key":"two"},"kind":"ConfigMap","metadata":{"labels":{"app":"demo"},"name":"csa","namespace":"default"}}\n');
  // Back to client-side apply: the annotation is there to diff against, so it patches.
  const back = await kubectl(s.kubeconfig, ['apply', '-f', manifest('csa', 'one')]);
  t.is(back.code, 0, back.stderr);
  t.is(back.stdout.trim(), 'configmap/csa configured');
  const client = await get('csa');
  t.is(client.data.key, 'one');
  t.deepEqual(owners(client).find((o: any) => o[0] === 'kubectl-client-side-apply'), [
    'kubectl-client-side-apply',
    'Update',
    { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:annotations': { [`f:${LAST_APPLIED}`]: {} } } },
  ]);
});

test.serial('kubectl 1.27 and 1.33: apply --server-side creates, and prints the conflict of another field manager', async (t) => {
  for (const version of ['1.27', '1.33']) {
    const bin = `${SDK}/kubectl.${version}`;
    const name = `v${version.replace('.', '-')}`;
    const created = await run(bin, ['--kubeconfig', s.kubeconfig, 'apply', '--server-side', '-f', manifest(name, 'one')], { timeoutMs: 60_000 });
    t.is(created.code, 0, `${version}: ${created.stderr}`);
    const conflict = await run(bin, ['--kubeconfig', s.kubeconfig, 'apply', '--server-side', '--field-manager=other', '-f', manifest(name, 'two')], { timeoutMs: 60_000 });
    t.is(conflict.code, 1, version);
    t.regex(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.data\.key/, version);
  }
});

test.serial('the Python client’s dynamic server_side_apply: create, a 409 ConflictError, force_conflicts', async (t) => {
  const out = await python(
    s.kubeconfig,
    [
      'from kubernetes import dynamic',
      'cms = dynamic.DynamicClient(client.ApiClient()).resources.get(api_version="v1", kind="ConfigMap")',
      'def body(v): return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py", "namespace": "default"}, "data": {"k": v}})',
      // python3-kubernetes 22 sends only string bodies with the apply content type.
      'first = cms.server_side_apply(body=body("a"), name="py", namespace="default", field_manager="python-one")',
      'try:',
      '    cms.server_side_apply(body=body("b"), name="py", namespace="default", field_manager="python-two")',
      '    conflict = None',
      'except dynamic.exceptions.ConflictError as e:',
      '    conflict = [e.status, json.loads(e.body)["details"]["causes"]]',
      'forced = cms.server_side_apply(body=body("b"), name="py", namespace="default", field_manager="python-two", force_conflicts=True)',
      'print(json.dumps({"first": first.to_dict()["metadata"]["managedFields"][0]["manager"], "conflict": conflict, "forced": forced.data.k, "owners": [m.manager for m in forced.metadata.managedFields]}))',
    ].join('\n'),
  );
  t.deepEqual(out, {
    first: 'python-one',
    conflict: [409, [{ reason: 'FieldManagerConflict', message: 'conflict with "python-one"', field: '.data.k' }]],
    forced: 'b',
    owners: ['python-two'],
  });
});

test.serial('ruby kubeclient’s apply_config_map: create, a 409 without force, its default force takes the field', async (t) => {
  const out = await ruby(
    s.url,
    s.dataDir,
    [
      'cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "rb", namespace: "default" }, data: { k: "a" } }',
      'first = client.apply_config_map(cm, field_manager: "ruby-one")',
      'conflict = begin; client.apply_config_map(cm.merge(data: { k: "b" }), field_manager: "ruby-two", force: false); nil; rescue Kubeclient::HttpError => e; [e.error_code, e.message]; end',
      'forced = client.apply_config_map(cm.merge(data: { k: "b" }), field_manager: "ruby-two")',
      'puts JSON.generate({ first: first.metadata.managedFields[0].manager, conflict: conflict, forced: forced.data.k })',
    ].join('\n'),
  );
  t.deepEqual(out, { first: 'ruby-one', conflict: [409, 'Apply failed with 1 conflict: conflict with "ruby-one": .data.k'], forced: 'b' });
});
