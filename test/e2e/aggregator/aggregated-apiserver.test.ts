/**
 * Aggregated API servers end to end (issue 22, items 2 and 3): the sample aggregated server
 * (docs/examples/sample-apiserver.ts) as its own process over real TLS, registered with an
 * APIService pointing at an ExternalName Service; svc-apiserver checks it (Available, Passed),
 * lists its group in discovery, and proxies kubectl's requests with the front-proxy client
 * certificate and the caller's identity in the request headers, which the sample trusts and
 * records; RBAC is enforced by svc-apiserver before proxying; stopping the sample makes the
 * APIService Unavailable (FailedDiscoveryCheck) and its requests 503; the built-in groups are
 * local APIServices; the sample's OpenAPI is merged into /openapi/v2 and /openapi/v3 (kubectl
 * explain flunders); a ClusterIP Service is resolved through its EndpointSlices (MissingEndpoints
 * without one, a second sample on an address of lo with one).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { request } from 'undici';
import { createCA, issue } from '../../../apiserver/pki/certs';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { kubectl, run } from '../../helpers/real-clients';

/** kubectl 1.27 among the Cloud SDK's versioned binaries (as test/e2e/apiserver/crd.test.ts finds it). */
const KUBECTL_127 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.27';
import { eventually } from '../agent/agent-process';

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'svc-aggregator-'));
let s: RunningApiServer;
let sample: ChildProcess;
let samplePort: number;
let caBundle: string;
let files: Record<'proxyCa' | 'proxyCert' | 'proxyKey' | 'cert' | 'key', string>;
// The second sample, behind an EndpointSlice: on an address of lo (slices refuse loopback addresses), unique per run.
let sample2: ChildProcess | undefined;
const sample2Address = `203.0.113.${1 + (process.pid % 250)}`;
let addressAdded = false;
const ip = (args: string[]) => promisify(execFile)('ip', args);

async function startSample(certFile: string, keyFile: string, proxyCaFile: string, port = samplePort, address?: string): Promise<ChildProcess> {
  const bind = address ? ['--bind-address', address] : [];
  const p = spawn(process.execPath, [join(repoRoot, 'dist', 'docs', 'examples', 'sample-apiserver.js'), '--port', String(port), '--cert', certFile, '--key', keyFile, '--requestheader-client-ca', proxyCaFile, '--allowed-names', 'front-proxy-client', ...bind], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    p.stdout.once('data', () => resolve());
    p.once('exit', (code) => reject(new Error(`sample exited ${code}`)));
  });
  return p;
}

test.before(async () => {
  const proxyCa = await createCA('front-proxy-ca');
  const proxyClient = await issue(proxyCa, { commonName: 'front-proxy-client', usage: 'client', validityMs: DAY });
  const servingCa = await createCA('wardle-ca');
  const serving = await issue(servingCa, { commonName: 'sample', dnsNames: ['sample.wardle.svc'], usage: 'server', validityMs: DAY });
  const f = (name: string, text: string) => (writeFileSync(join(dir, name), text, { mode: 0o600 }), join(dir, name));
  files = {
    proxyCa: f('front-proxy-ca.crt', proxyCa.certPem),
    proxyCert: f('proxy.crt', proxyClient.certPem),
    proxyKey: f('proxy.key', proxyClient.keyPem),
    cert: f('sample.crt', serving.certPem),
    key: f('sample.key', serving.keyPem),
  };
  caBundle = Buffer.from(servingCa.certPem).toString('base64');
  samplePort = await freePort();
  [s, sample] = await Promise.all([startApiServer({ args: [`--proxy-client-cert-file=${files.proxyCert}`, `--proxy-client-key-file=${files.proxyKey}`] }), startSample(files.cert, files.key, files.proxyCa)]);
});
test.after.always(async () => {
  sample?.kill('SIGTERM');
  sample2?.kill('SIGTERM');
  if (addressAdded) await ip(['addr', 'del', `${sample2Address}/32`, 'dev', 'lo']).catch(() => {});
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const k = async (args: string[], input?: string) => {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 30_000, input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
};
const available = async (name: string) => {
  const a = JSON.parse(await k(['get', 'apiservice', name, '-o', 'json'])) as { status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } };
  return a.status?.conditions?.find((c) => c.type === 'Available');
};

test.serial('the built-in groups are local APIServices, Available', async (t) => {
  const c = await eventually('local APIService checked', async () => ((await available('v1.apps'))?.status === 'True' ? available('v1.apps') : undefined), 30_000, 200);
  t.like(c, { status: 'True', reason: 'Local' });
  t.regex(await k(['get', 'apiservices']), /v1\.rbac\.authorization\.k8s\.io\s+Local\s+True/);
});

test.serial('an aggregated server: Available, discovered, proxied with the caller\'s identity, authorized here first', async (t) => {
  await k(['create', 'namespace', 'wardle']);
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'sample', namespace: 'wardle' }, spec: { type: 'ExternalName', externalName: 'localhost' } }));
  const apiService = {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1alpha1.wardle.example.com' },
    spec: { group: 'wardle.example.com', version: 'v1alpha1', service: { namespace: 'wardle', name: 'sample', port: samplePort }, caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
  };
  await k(['create', '-f', '-'], JSON.stringify(apiService));
  const cond = await eventually('aggregated server available', async () => ((await available('v1alpha1.wardle.example.com'))?.status === 'True' ? available('v1alpha1.wardle.example.com') : undefined), 30_000, 200);
  t.like(cond, { status: 'True', reason: 'Passed' });

  t.regex(await k(['api-versions']), /^wardle\.example\.com\/v1alpha1$/m);
  t.regex(await k(['api-resources', '--api-group=wardle.example.com']), /flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/);
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'wardle.example.com/v1alpha1', kind: 'Flunder', metadata: { name: 'f1', namespace: 'wardle' }, spec: { reference: 'x' } }));
  const got = JSON.parse(await k(['get', 'flunders', 'f1', '-n', 'wardle', '-o', 'json'])) as { spec: { createdBy: string; createdByGroups: string[] } };
  const me = JSON.parse(await k(['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: { username: string; groups: string[] } } };
  t.is(got.spec.createdBy, me.status.userInfo.username);
  t.deepEqual([...got.spec.createdByGroups].sort(), [...me.status.userInfo.groups].sort());
  t.regex(await k(['get', 'flunders', '-n', 'wardle']), /f1/);

  // A watch streams through the proxy.
  const watch = await request(`${s.url}/apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders?watch=true`, { dispatcher: s.admin });
  t.is(watch.statusCode, 200);
  const first = new Promise<string>((resolve) => watch.body.once('data', (c: Buffer) => resolve(c.toString('utf8'))));
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'wardle.example.com/v1alpha1', kind: 'Flunder', metadata: { name: 'f2', namespace: 'wardle' } }));
  t.like(JSON.parse((await first).split('\n')[0]), { type: 'ADDED', object: { metadata: { name: 'f2' } } });
  watch.body.destroy();

  // svc-apiserver authorizes before proxying: a user with no grant is refused here.
  const denied = await kubectl(s.kubeconfig, ['get', 'flunders', '-n', 'wardle', '--as=nobody'], { timeoutMs: 30_000 });
  t.not(denied.code, 0);
  t.regex(denied.stderr, /is forbidden: User "nobody" cannot list resource "flunders" in API group "wardle\.example\.com" in the namespace "wardle"/);
});

test.serial('the aggregated server\'s OpenAPI is merged: kubectl explain flunders, /openapi/v2 and the v3 index', async (t) => {
  // Fetched with the availability check (on the next 30 s recheck at the latest): wait for the v3 index to list it.
  const index = await eventually(
    'the sample\'s group version in /openapi/v3',
    async () => {
      const r = await request(`${s.url}/openapi/v3`, { dispatcher: s.admin });
      const body = (await r.body.json()) as { paths: Record<string, { serverRelativeURL: string }> };
      return body.paths['apis/wardle.example.com/v1alpha1'] ? body : undefined;
    },
    60_000,
    300,
  );
  t.regex(index.paths['apis/wardle.example.com/v1alpha1'].serverRelativeURL, /^\/openapi\/v3\/apis\/wardle\.example\.com\/v1alpha1\?hash=/);
  // kubectl 1.32 explains through /openapi/v3.
  const explain = await k(['explain', 'flunders.spec']);
  t.regex(explain, /GROUP:\s+wardle\.example\.com/);
  t.regex(explain, /createdBy\s+<string>/);
  t.regex(explain, /The user who created the flunder/);
  // /openapi/v2 carries its paths and definition too (kubectl 1.27 and older read that one).
  const v2 = await request(`${s.url}/openapi/v2`, { dispatcher: s.admin, headers: { accept: 'application/json' } });
  const doc = (await v2.body.json()) as { paths: Record<string, unknown>; definitions: Record<string, unknown> };
  t.truthy(doc.definitions['com.example.wardle.v1alpha1.Flunder']);
  t.truthy(doc.paths['/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders']);
  t.truthy(doc.definitions['io.k8s.api.core.v1.Pod'] ?? Object.keys(doc.definitions).find((d) => d.endsWith('.v1.Pod')), 'the local definitions stay');
  // kubectl 1.27 reads /openapi/v2 in protobuf: the merged document converts to gnostic's message.
  const old = await run(KUBECTL_127, ['--kubeconfig', s.kubeconfig, 'explain', 'flunders.spec']);
  t.is(old.code, 0, old.stderr);
  t.regex(old.stdout, /createdBy\s+<string>/);
});

test.serial('a stopped aggregated server: Unavailable with FailedDiscoveryCheck, and its requests 503', async (t) => {
  sample.kill('SIGTERM');
  await new Promise((r) => sample.once('exit', r));
  // A change to the Service re-checks at once (as do the 30 s rechecks).
  await k(['annotate', 'service', 'sample', '-n', 'wardle', 'checked=again']);
  const cond = await eventually('aggregated server unavailable', async () => ((await available('v1alpha1.wardle.example.com'))?.status === 'False' ? available('v1alpha1.wardle.example.com') : undefined), 30_000, 200);
  t.is(cond?.reason, 'FailedDiscoveryCheck');
  t.regex(cond?.message ?? '', /^failing or missing response from https:\/\/localhost:\d+\/apis\/wardle\.example\.com\/v1alpha1: /);
  const r = await request(`${s.url}/apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders`, { dispatcher: s.admin });
  t.is(r.statusCode, 503);
  t.like(await r.body.json(), { kind: 'Status', reason: 'ServiceUnavailable' });
  // A missing Service is reported as such.
  await k(['delete', 'service', 'sample', '-n', 'wardle']);
  const gone = await eventually('service gone', async () => ((await available('v1alpha1.wardle.example.com'))?.reason === 'ServiceNotFound' ? available('v1alpha1.wardle.example.com') : undefined), 30_000, 200);
  t.is(gone?.message, 'service/sample in "wardle" is not present');
});

test.serial("a ClusterIP Service is resolved through its EndpointSlices: MissingEndpoints without one, Available and proxied with one", async (t) => {
  await ip(['addr', 'replace', `${sample2Address}/32`, 'dev', 'lo']);
  addressAdded = true;
  const port = await freePort();
  sample2 = await startSample(files.cert, files.key, files.proxyCa, port, sample2Address);
  // The Service keeps the name the serving certificate was issued for (sample.wardle.svc); port 443 → the sample's port.
  await k(['patch', 'apiservice', 'v1alpha1.wardle.example.com', '--type=merge', '-p', JSON.stringify({ spec: { service: { namespace: 'wardle', name: 'sample', port: 443 } } })]);
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'sample', namespace: 'wardle' }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } }));
  const missing = await eventually('MissingEndpoints', async () => ((await available('v1alpha1.wardle.example.com'))?.reason === 'MissingEndpoints' ? available('v1alpha1.wardle.example.com') : undefined), 30_000, 200);
  t.is(missing?.message, 'endpoints for service/sample in "wardle" have no addresses with port name "https"');
  await k(['create', '-f', '-'], JSON.stringify({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'sample-1', namespace: 'wardle', labels: { 'kubernetes.io/service-name': 'sample' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [sample2Address], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  }));
  const cond = await eventually('available through the slice', async () => ((await available('v1alpha1.wardle.example.com'))?.status === 'True' ? available('v1alpha1.wardle.example.com') : undefined), 30_000, 200);
  t.like(cond, { status: 'True', reason: 'Passed' });
  // Proxied to the second sample (its own, empty store): what is created there is read back.
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'wardle.example.com/v1alpha1', kind: 'Flunder', metadata: { name: 'f3', namespace: 'wardle' } }));
  t.regex(await k(['get', 'flunders', '-n', 'wardle', '-o', 'name']), /^flunder\.wardle\.example\.com\/f3$/m);
});
