import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

// Issue 16, defect 1 (JSON Patch amplification) against a real svc-apiserver with RBAC: a user
// who may patch one ConfigMap sends a 2 KB JSON patch that doubles a subtree 21 times. It is
// refused with upstream's copy-limit error before the doubling is paid for, and the server keeps
// answering other clients. Bounded in count (one hostile request per test) and by the helpers'
// start-up deadline.

let s: RunningApiServer;
let dir: string;
let mallory: Agent;
const ns = 'adv-patch';
const auth = { authorization: 'Bearer mallory-token' };
const cmUrl = () => `${s.url}/api/v1/namespaces/${ns}/configmaps/one`;

/** The server's peak resident memory so far (VmHWM), in MiB. */
function peakMb(): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'));
  if (!m) throw new Error('no VmHWM');
  return Number(m[1]) / 1024;
}

/** The probe's body: an add, then n copies of the new subtree into itself, each doubling it. */
function doublingPatch(n: number): unknown[] {
  const ops: unknown[] = [{ op: 'add', path: '/metadata/labels', value: { x: 'y'.repeat(500) } }];
  for (let i = 0; i < n; i++) ops.push({ op: 'copy', from: '/metadata/labels', path: `/metadata/labels/c${i}` });
  return ops;
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-adv-patch-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'mallory-token,mallory,u-mallory\n');
  s = await startApiServer({ args: ['--authorization-mode=Node,RBAC', `--token-auth-file=${tokens}`] });
  mallory = new Agent({ connect: { ca: s.caPem, servername: 'localhost' } });
  const rbac = `${s.url}/apis/rbac.authorization.svc.io/v1/namespaces/${ns}`;
  const setup: Array<[string, unknown]> = [
    [`${s.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
    [`${s.url}/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: 'b' } }],
    [
      `${rbac}/roles`,
      {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'Role',
        metadata: { name: 'patch-one' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'], verbs: ['get', 'patch'] }],
      },
    ],
    [
      `${rbac}/rolebindings`,
      {
        apiVersion: 'rbac.authorization.svc.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'mallory-patch-one' },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'patch-one' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'mallory' }],
      },
    ],
  ];
  for (const [url, body] of setup) {
    const r = await call(s.admin, 'POST', url, body);
    if (r.status !== 201) throw new Error(`${url}: ${r.status} ${r.text}`);
  }
});

test.after.always(async () => {
  await mallory?.close();
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.serial('the user may patch its one ConfigMap (the hostile patch is not refused by authorization)', async (t) => {
  const ok = await call(mallory, 'PATCH', `${cmUrl()}?dryRun=All`, [{ op: 'add', path: '/data/c', value: 'd' }], { ...auth, 'content-type': 'application/json-patch+json' });
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.body.data, { a: 'b', c: 'd' });
});

test.serial('an add and 21 self-copies (2 KB, dryRun=All) are refused with 422 before they are paid; other clients are answered', async (t) => {
  const body = JSON.stringify(doublingPatch(21));
  t.true(body.length < 2100);
  const peakBefore = peakMb();
  const hostile = call(mallory, 'PATCH', `${cmUrl()}?dryRun=All`, body, { ...auth, 'content-type': 'application/json-patch+json' });
  // Another client, while the patch is in flight.
  const other = call(s.admin, 'GET', cmUrl());
  const [h, g] = await Promise.all([hostile, other]);
  t.is(h.status, 422, h.text);
  t.is(h.body.reason, 'Invalid');
  t.regex(h.body.message, /^Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  t.is(g.status, 200);
  t.deepEqual(g.body.data, { a: 'b' });
  // Unbounded, the doubling peaks above 1 GB; bounded, it stops near the 3 MiB copy limit.
  const grew = peakMb() - peakBefore;
  t.true(grew < 200, `peak resident memory grew by ${grew.toFixed(0)} MiB`);
  // Nothing was written.
  t.is((await call(s.admin, 'GET', cmUrl())).body.metadata.labels, undefined);
});

test.serial('merge and strategic merge patches whose result passes the body limit are refused with 413', async (t) => {
  // A stored 1 MB ConfigMap and a 2.2 MB patch: each within the body limit, together beyond it.
  const url = `${s.url}/api/v1/namespaces/${ns}/configmaps`;
  const created = await call(s.admin, 'POST', url, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(1_000_000) } });
  t.is(created.status, 201, created.text.slice(0, 200));
  for (const ct of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
    const r = await call(s.admin, 'PATCH', `${url}/big?dryRun=All`, { data: { b: 'y'.repeat(2_200_000) } }, { 'content-type': ct });
    t.is(r.status, 413, `${ct}: ${r.text.slice(0, 200)}`);
    t.is(r.body.message, 'the patched object is larger than the limit of 3145728 bytes');
  }
});
