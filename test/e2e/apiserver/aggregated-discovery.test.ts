import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

// Issue 17, item 4: aggregated discovery against stock kubectl. With it, kubectl discovers every
// group, version and resource in two requests (/api and /apis); without it, one more request per
// group version. Each kubectl runs with an empty cache directory and a bounded timeout.

const SDK = '/usr/lib/google-cloud-sdk/bin';
let s: RunningApiServer;

test.before(async () => {
  s = await startApiServer();
});
test.after.always(async () => {
  await s?.stop();
});

function kubectl(bin: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--kubeconfig', s.kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${stderr}${err.message}`));
      else resolve({ stdout, stderr });
    });
  });
}

async function get(path: string, accept?: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const res = await request(`${s.url}${path}`, { dispatcher: s.admin, headers: accept ? { accept } : {} });
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(await res.body.text()) };
}

/**
 * Every resource of each group's preferred version as the legacy documents list them, as `kubectl
 * api-resources` prints them: sub-resources and resources without verbs left out (the svc.io
 * names of groups also served under their k8s.io names are listed without verbs).
 */
async function legacyResources(): Promise<Set<string>> {
  const out = new Set<string>();
  const listed = (r: { name: string; verbs: string[] }) => !r.name.includes('/') && r.verbs.length > 0;
  const core = await get('/api/v1');
  for (const r of core.body.resources) if (listed(r)) out.add(`${r.name} v1`);
  for (const g of (await get('/apis')).body.groups) {
    const gv = g.preferredVersion.groupVersion;
    for (const r of (await get(`/apis/${gv}`)).body.resources) if (listed(r)) out.add(`${r.name} ${gv}`);
  }
  return out;
}

/** The discovery requests kubectl made, from its -v=6 log (either log format). */
function discoveryRequests(log: string, port: number): string[] {
  const urls = [...log.matchAll(new RegExp(`https://127\\.0\\.0\\.1:${port}(/[^ "?]*)`, 'g'))].map((m) => m[1]);
  return urls.filter((p) => p === '/api' || p === '/apis' || p.startsWith('/api/') || p.startsWith('/apis/'));
}

for (const [version, discovery] of [
  ['1.27', 'v2beta1'],
  ['1.29', 'v2beta1'],
  ['1.30', 'v2'],
  ['1.33', 'v2'],
] as const) {
  test.serial(`kubectl ${version} (${discovery}) discovers every resource with two requests`, async (t) => {
    const cache = mkdtempSync(join(tmpdir(), 'svc-discovery-cache-'));
    const { stdout, stderr } = await kubectl(`${SDK}/kubectl.${version}`, 'api-resources', `--cache-dir=${cache}`, '-o', 'wide', '--no-headers', '-v=6');
    t.deepEqual(discoveryRequests(stderr, s.port), ['/api', '/apis']);
    // What it found is what the legacy documents list, one group version at a time.
    const found = new Set(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .map((cols) => `${cols[0]} ${cols.slice(1).find((c) => /^([a-z0-9.-]+\/)?v\d+[a-z0-9]*$/.test(c))}`),
    );
    t.deepEqual([...found].sort(), [...(await legacyResources())].sort());
    t.true(found.has('roles rbac.authorization.k8s.io/v1'));
    // Each resource once, under its upstream name, as an upstream cluster lists it (the svc.io names
    // are served and mapped, not listed: see docs/architecture.md, "The k8s.io names").
    t.false(found.has('roles rbac.authorization.svc.io/v1'));
    t.false([...found].some((f) => f.includes('.svc.io/')), [...found].filter((f) => f.includes('.svc.io/')).join(', '));
    const lines = stdout.trim().split('\n');
    t.is(lines.filter((l) => /^roles\s/.test(l)).length, 1);
    t.is(lines.filter((l) => /^leases\s/.test(l)).length, 1);
    t.regex(stdout, /selfsubjectaccessreviews\s.*\screate\b/);
  });
}

test.serial('the documents: Content-Type names what was served, Vary: Accept; plain clients get the legacy ones', async (t) => {
  for (const [accept, served] of [
    ['application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json', 'apidiscovery.k8s.io/v2'],
    ['application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', 'apidiscovery.k8s.io/v2beta1'],
    ['application/json;g=apidiscovery.svc.io;v=v2;as=APIGroupDiscoveryList', 'apidiscovery.svc.io/v2'],
  ]) {
    const [group, version] = served.split('/');
    for (const path of ['/api', '/apis']) {
      const r = await get(path, accept);
      t.is(r.status, 200);
      t.is(r.headers['content-type'], `application/json;g=${group};v=${version};as=APIGroupDiscoveryList`);
      t.regex(String(r.headers.vary), /\bAccept\b/);
      t.is(r.body.kind, 'APIGroupDiscoveryList');
      t.is(r.body.apiVersion, served);
    }
  }
  const core = (await get('/api', 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList')).body;
  t.deepEqual(core.items.map((i: { versions: Array<{ version: string }> }) => i.versions.map((v) => v.version)), [['v1']]);
  const legacy = await get('/apis', 'application/json, */*');
  t.is(legacy.headers['content-type'], 'application/json');
  t.regex(String(legacy.headers.vary), /\bAccept\b/);
  t.is(legacy.body.kind, 'APIGroupList');
  t.is((await get('/api')).body.kind, 'APIVersions');
  // An unserved discovery version falls back to the legacy document, as upstream servers answer.
  t.is((await get('/apis', 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json')).body.kind, 'APIGroupList');
});

for (const version of ['1.27', '1.33']) {
  test.serial(`kubectl ${version}: manifests and resource names under either group name still work (the svc.io kinds are mapped)`, async (t) => {
    const bin = `${SDK}/kubectl.${version}`;
    const cache = mkdtempSync(join(tmpdir(), 'svc-discovery-cache-'));
    const k = (...args: string[]) => kubectl(bin, `--cache-dir=${cache}`, ...args);
    const ns = `names-${version.replace('.', '-')}`;
    await k('create', 'namespace', ns);
    const file = join(cache, 'roles.yaml');
    const role = (group: string, name: string) => `apiVersion: rbac.authorization.${group}/v1\nkind: Role\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nrules:\n- apiGroups: [""]\n  resources: [pods]\n  verbs: [get]\n`;
    writeFileSync(file, `${role('svc.io', 'by-svc')}---\n${role('k8s.io', 'by-k8s')}`);
    const applied = await k('apply', '-f', file);
    t.regex(applied.stdout, /role\.rbac\.authorization\.svc\.io\/by-svc created/);
    t.regex(applied.stdout, /role\.rbac\.authorization\.k8s\.io\/by-k8s created/);
    for (const resource of ['roles', 'roles.rbac.authorization.k8s.io', 'roles.rbac.authorization.svc.io']) {
      const names = (await k('get', resource, '-n', ns, '-o', 'name')).stdout.trim().split('\n');
      t.deepEqual(names.map((n) => n.split('/')[1]).sort(), ['by-k8s', 'by-svc'], resource);
    }
    // A bare name resolves to the upstream group, as kubectl's typed commands expect.
    t.is((await k('get', 'role', 'by-svc', '-n', ns, '-o', 'jsonpath={.apiVersion}')).stdout, 'rbac.authorization.k8s.io/v1');
    t.is((await k('get', 'roles.rbac.authorization.svc.io', 'by-k8s', '-n', ns, '-o', 'jsonpath={.apiVersion}')).stdout, 'rbac.authorization.svc.io/v1');
    const deleted = await k('delete', '-f', file);
    t.regex(deleted.stdout, /by-svc" deleted/);
  });
}
