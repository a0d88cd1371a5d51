import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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

/** Every resource of each group's preferred version as the legacy documents list them (what `kubectl api-resources` prints). */
async function legacyResources(): Promise<Set<string>> {
  const out = new Set<string>();
  const core = await get('/api/v1');
  for (const r of core.body.resources) if (!r.name.includes('/')) out.add(`${r.name} v1`);
  for (const g of (await get('/apis')).body.groups) {
    const gv = g.preferredVersion.groupVersion;
    for (const r of (await get(`/apis/${gv}`)).body.resources) if (!r.name.includes('/')) out.add(`${r.name} ${gv}`);
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
    t.true(found.has('roles rbac.authorization.svc.io/v1'));
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
