/**
 * /openapi/v2 as protobuf (issue 17, item 1) against a real svc-apiserver: kubectl 1.27 and 1.28
 * read only gnostic's protobuf Document for client-side apply, diff and explain (without it each
 * fails with "the server could not find the requested resource"); and the served bytes are checked
 * by an independent reader, Debian's python3-protobuf with the classes protoc builds from
 * proto/gnostic/openapiv2, against the JSON document the server serves.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

const SDK = '/usr/lib/google-cloud-sdk/bin';
const PYTHON = '/usr/bin/python3'; // Debian's, with python3-protobuf and python3-yaml
const PROTOC = '/usr/bin/protoc';
const PB = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** What client-go sends (the deprecated name, with its `@`). */
const PB_CLIENT_GO = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const repoRoot = join(__dirname, '..', '..', '..', '..');

let s: RunningApiServer;
let dir: string;

test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-openapi-pb-'));
});
test.after.always(async () => {
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(bin, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr: err && code === -1 ? `${stderr}${err.message}` : stderr });
    });
  });
}

async function fetchV2(accept: string): Promise<{ status: number; type: string | undefined; vary: string | undefined; bytes: Buffer }> {
  const res = await request(`${s.url}/openapi/v2`, { dispatcher: s.admin, headers: { accept } });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, vary: res.headers.vary as string | undefined, bytes };
}

test('the served protobuf is the served JSON document, read by python3-protobuf from the committed .proto', async (t) => {
  const pb = await fetchV2(PB_CLIENT_GO);
  t.is(pb.status, 200);
  t.is(pb.type, PB, 'answered with the name upstream answers with');
  t.is(pb.vary, 'Accept');
  t.deepEqual((await fetchV2(PB)).bytes, pb.bytes, 'both names of the media type');
  const json = await fetchV2('application/json');
  t.is(json.type, 'application/json');
  t.is(JSON.parse(json.bytes.toString('utf8')).swagger, '2.0');
  t.is((await fetchV2('*/*')).type, 'application/json', 'a wildcard gets JSON, as upstream');
  t.is((await fetchV2(`application/json;q=0.5, ${PB_CLIENT_GO}`)).type, PB, 'quality decides');
  t.is((await fetchV2('application/vnd.kubernetes.protobuf')).status, 406);

  const out = join(dir, 'py');
  mkdirSync(out);
  const proto = join(repoRoot, 'proto');
  await run(PROTOC, [`-I${proto}`, `--python_out=${out}`, 'gnostic/openapiv2/OpenAPIv2.proto']).then((r) => t.is(r.code, 0, r.stderr));
  writeFileSync(join(dir, 'v2.json'), json.bytes);
  writeFileSync(join(dir, 'v2.pb'), pb.bytes);
  const r = await run(PYTHON, [join(repoRoot, 'test', 'e2e', 'apiserver', 'openapi_v2_check.py'), out, join(dir, 'v2.json'), join(dir, 'v2.pb')]);
  t.is(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as { parsed: boolean; deterministic: boolean; equal: boolean; diff?: string; definitions: number; paths: number; kinds: string[] };
  t.true(report.parsed);
  t.true(report.deterministic, 'our bytes are the deterministic serialization of what they hold (field order, no zero scalars, no unknown fields)');
  t.true(report.equal, report.diff);
  t.true(report.definitions > 20 && report.paths > 40);
  for (const kind of ['/v1/Pod', '/v1/Service', 'coordination.k8s.io/v1/Lease', 'coordination.svc.io/v1/Lease', 'rbac.authorization.k8s.io/v1/Role']) t.true(report.kinds.includes(kind), kind);
});

function manifest(ns: string, changed: boolean): string {
  const https = changed ? '\n  - name: https\n    port: 443\n    targetPort: 8443' : '';
  return `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
data:
  level: ${changed ? 'debug' : 'info'}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080${https}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ${ns}
  labels:
    app: web
    tier: ${changed ? 'canary' : 'stable'}
spec:
  containers:
  - name: app
    image: registry.example/web:1
`;
}

for (const version of ['1.27', '1.28']) {
  test.serial(`kubectl ${version}: apply -f, diff -f and explain read /openapi/v2 as protobuf`, async (t) => {
    const bin = `${SDK}/kubectl.${version}`;
    const kubectl = (...args: string[]) => run(bin, ['--kubeconfig', s.kubeconfig, ...args]);
    const ns = `openapi-${version.replace('.', '-')}`;
    const first = join(dir, `${ns}-1.yaml`);
    const second = join(dir, `${ns}-2.yaml`);
    writeFileSync(first, manifest(ns, false));
    writeFileSync(second, manifest(ns, true));

    const apply = await kubectl('apply', '-f', first, '-v=8');
    t.is(apply.code, 0, apply.stderr);
    for (const kind of ['namespace', 'configmap/settings', 'service/web', 'pod/web']) t.regex(apply.stdout, new RegExp(`${kind}.* created`));
    t.regex(apply.stderr, /GET https:\/\/[^ ]+\/openapi\/v2/);
    t.true(apply.stderr.includes(`Accept: ${PB_CLIENT_GO}`));
    t.true(apply.stderr.includes(`Content-Type: ${PB}`));

    const same = await kubectl('diff', '-f', first);
    t.deepEqual([same.code, same.stdout], [0, ''], same.stderr);
    const diff = await kubectl('diff', '-f', second);
    t.is(diff.code, 1, `kubectl diff exits 1 when something differs: ${diff.stderr}`);
    t.regex(diff.stdout, /^- {2}level: info\n\+ {2}level: debug$/m);
    t.regex(diff.stdout, /^\+ {2}- name: https\n\+ {4}port: 443$/m);
    t.regex(diff.stdout, /^- {4}tier: stable\n\+ {4}tier: canary$/m);

    const again = await kubectl('apply', '-f', second);
    t.is(again.code, 0, again.stderr);
    t.regex(again.stdout, /configmap\/settings configured/);
    t.regex(again.stdout, /service\/web configured/);
    t.regex(again.stdout, /pod\/web configured/);
    const svc = JSON.parse((await kubectl('get', 'service', 'web', '-n', ns, '-o', 'json')).stdout) as { spec: { ports: Array<{ name: string; port: number }> } };
    t.deepEqual(
      svc.spec.ports.map((p) => [p.name, p.port]),
      [
        ['http', 80],
        ['https', 443],
      ],
    );
    const pod = JSON.parse((await kubectl('get', 'pod', 'web', '-n', ns, '-o', 'json')).stdout) as { metadata: { labels: Record<string, string> } };
    t.deepEqual(pod.metadata.labels, { app: 'web', tier: 'canary' });

    const explain = await kubectl('explain', 'pods.spec.containers');
    t.is(explain.code, 0, explain.stderr);
    t.regex(explain.stdout, /^KIND:\s+Pod$/m);
    t.regex(explain.stdout, /containers\s+<\[\]Object>/);
    t.regex(explain.stdout, /^\s+image\s+<string>$/m);
    t.regex(explain.stdout, /^\s+ports\s+<\[\]Object>$/m);
    // Every field says what it is (issue 17: explain printed <empty> for every field).
    t.notRegex(explain.stdout, /<empty>/);
    t.regex(explain.stdout, /^DESCRIPTION:\n\s+\S/m);
  });
}

test.serial('ETag, 304 and gzip as upstream: kubectl 1.27 revalidates its cached document and gets a 304', async (t) => {
  const first = await request(`${s.url}/openapi/v2`, { dispatcher: s.admin, headers: { accept: PB_CLIENT_GO, 'accept-encoding': 'gzip' } });
  const zipped = Buffer.from(await first.body.arrayBuffer());
  t.is(first.statusCode, 200);
  t.is(first.headers['content-encoding'], 'gzip');
  const etag = first.headers.etag as string;
  t.regex(etag, /^"[0-9A-F]{128}"$/);
  t.deepEqual(gunzipSync(zipped), (await fetchV2(PB_CLIENT_GO)).bytes);
  const again = await request(`${s.url}/openapi/v2`, { dispatcher: s.admin, headers: { accept: 'application/json', 'if-none-match': etag } });
  t.is(again.statusCode, 304);
  t.is((await again.body.arrayBuffer()).byteLength, 0);

  // kubectl keeps /openapi/v2 in its HTTP cache (--cache-dir) and asks again with If-None-Match,
  // below its -v=8 log (which shows the cache's answer): the server's request counter shows the 304.
  const cache = mkdtempSync(join(tmpdir(), 'svc-openapi-cache-'));
  const file = join(cache, 'cm.yaml');
  writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cached\n  namespace: default\ndata:\n  a: b\n');
  const notModified = async () => {
    const res = await request(`${s.url}/metrics`, { dispatcher: s.admin });
    const m = /^apiserver_request_total\{verb="GET",resource="",code="304"\} (\d+)$/m.exec(await res.body.text());
    return m ? Number(m[1]) : 0;
  };
  try {
    const apply = () => run(`${SDK}/kubectl.1.27`, ['--kubeconfig', s.kubeconfig, `--cache-dir=${cache}`, 'apply', '--dry-run=server', '-f', file, '-v=8']);
    const before = await notModified();
    const one = await apply();
    t.is(one.code, 0, one.stderr);
    t.regex(one.stderr, /Etag: "[0-9A-F]{128}"/);
    t.is(await notModified(), before, 'the first run has nothing cached');
    const two = await apply();
    t.is(two.code, 0, two.stderr);
    t.regex(two.stdout, /configmap\/cached created \(server dry run\)/);
    t.is(await notModified(), before + 1, 'the second run revalidated its cached document: one 304');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
