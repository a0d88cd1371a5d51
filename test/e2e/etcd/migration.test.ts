import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, startApiServer } from '../../helpers/apiserver-process';
import { startEtcd } from '../../helpers/etcd-process';
import { call } from '../../helpers/http';

// Migration from the SQLite default to etcd (issue 7, point 4): fill a SQLite store through a real
// server, export it, import it into etcd, verify, and read the same objects through a server on etcd.

/** Runs `svc-apiserver <sub-command> ...` (the launcher startApiServer uses too). */
function tool(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(join(repoRoot, 'bin', 'svc-apiserver'), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(stdin ?? '');
  });
}

test('SQLite → export → import into etcd → verify → a server on etcd serves the same objects', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-migrate-e2e-'));
  const etcd = await startEtcd();
  t.teardown(async () => {
    await etcd.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // 1. A single-node server on SQLite, with objects of a few kinds, one of them updated.
  const sqlite = await startApiServer({ dataDir });
  const created: Array<{ path: string; uid: string; creationTimestamp: string; data?: unknown }> = [];
  try {
    const ns = await call(sqlite.admin, 'POST', `${sqlite.url}/api/v1/namespaces`, { metadata: { name: 'team-a', labels: { tier: 'gold' } } });
    t.is(ns.status, 201);
    created.push({ path: '/api/v1/namespaces/team-a', uid: ns.body.metadata.uid, creationTimestamp: ns.body.metadata.creationTimestamp });
    for (let i = 0; i < 30; i++) {
      const cm = await call(sqlite.admin, 'POST', `${sqlite.url}/api/v1/namespaces/team-a/configmaps`, { metadata: { name: `cm-${i}` }, data: { i: String(i) } });
      t.is(cm.status, 201);
      created.push({ path: `/api/v1/namespaces/team-a/configmaps/cm-${i}`, uid: cm.body.metadata.uid, creationTimestamp: cm.body.metadata.creationTimestamp, data: cm.body.data });
    }
    const cur = (await call(sqlite.admin, 'GET', `${sqlite.url}/api/v1/namespaces/team-a/configmaps/cm-0`)).body;
    const upd = await call(sqlite.admin, 'PUT', `${sqlite.url}/api/v1/namespaces/team-a/configmaps/cm-0`, { ...cur, data: { i: 'updated' } });
    t.is(upd.status, 200);
    created[1].data = { i: 'updated' };
    const secret = await call(sqlite.admin, 'POST', `${sqlite.url}/api/v1/namespaces/team-a/secrets`, { metadata: { name: 's' }, stringData: { password: 'hunter2' } });
    t.is(secret.status, 201);
    created.push({ path: '/api/v1/namespaces/team-a/secrets/s', uid: secret.body.metadata.uid, creationTimestamp: secret.body.metadata.creationTimestamp });
  } finally {
    await sqlite.stop();
  }

  // 2. Export (the server is stopped: SQLite is single-process).
  const exp = await tool(['export', `--data-dir=${dataDir}`]);
  t.is(exp.code, 0, exp.stderr);
  t.regex(exp.stderr, /^exported \d+ keys from sqlite /);
  const keys = exp.stdout.trimEnd().split('\n').length - 2;
  t.true(keys >= 35, `only ${keys} keys exported`);

  // 3. Import into etcd; the import verifies the target against the dump.
  const imp = await tool(['import', `--etcd-servers=${etcd.endpoint}`], exp.stdout);
  t.log(imp.stdout);
  t.is(imp.code, 0, imp.stdout + imp.stderr);
  t.regex(imp.stdout, new RegExp(`: ${keys} created, 0 already present`));
  t.regex(imp.stdout, new RegExp(`verification PASSED: ${keys} keys, every value identical \\(sha256\\)`));

  // 4. The stand-alone verification compares the two stores directly.
  const ver = await tool(['verify', `--data-dir=${dataDir}`, `--etcd-servers=${etcd.endpoint}`]);
  t.is(ver.code, 0, ver.stdout + ver.stderr);
  t.regex(ver.stdout, /^source: sqlite .* at revision \d+: \d+ keys$/m);
  t.regex(ver.stdout, /^target: etcd .* prefix \/registry-svc at revision \d+: \d+ keys$/m);
  t.regex(ver.stdout, /^\s+configmaps\s+(\d+)\s+\1$/m);
  t.regex(ver.stdout, /verification PASSED/);

  // 5. A server on etcd (same data dir, for the same PKI) serves the same objects: same uid,
  //    creationTimestamp and contents; only resourceVersion is the new store's.
  const onEtcd = await startApiServer({ dataDir, args: [`--etcd-servers=${etcd.endpoint}`] });
  try {
    for (const c of created) {
      const g = await call(onEtcd.admin, 'GET', `${onEtcd.url}${c.path}`);
      t.is(g.status, 200, c.path);
      t.is(g.body.metadata.uid, c.uid, c.path);
      t.is(g.body.metadata.creationTimestamp, c.creationTimestamp, c.path);
      if (c.data) t.deepEqual(g.body.data, c.data, c.path);
    }
    const s = await call(onEtcd.admin, 'GET', `${onEtcd.url}/api/v1/namespaces/team-a/secrets/s`);
    t.is(Buffer.from(s.body.data.password, 'base64').toString(), 'hunter2');
    const list = await call(onEtcd.admin, 'GET', `${onEtcd.url}/api/v1/namespaces/team-a/configmaps`);
    t.is(list.body.items.filter((i: { metadata: { name: string } }) => i.metadata.name.startsWith('cm-')).length, 30);
    // Writes work on the new store with its own resourceVersions.
    const cur = (await call(onEtcd.admin, 'GET', `${onEtcd.url}/api/v1/namespaces/team-a/configmaps/cm-1`)).body;
    const upd = await call(onEtcd.admin, 'PUT', `${onEtcd.url}/api/v1/namespaces/team-a/configmaps/cm-1`, { ...cur, data: { i: 'on etcd' } });
    t.is(upd.status, 200);
    t.is(upd.body.metadata.uid, created[2].uid);
    t.not(upd.body.metadata.resourceVersion, cur.metadata.resourceVersion);
  } finally {
    await onEtcd.stop();
  }

  // After the server wrote to etcd, the stores differ and verify says so (exit 1).
  const after = await tool(['verify', `--data-dir=${dataDir}`, `--etcd-servers=${etcd.endpoint}`]);
  t.is(after.code, 1);
  t.regex(after.stdout, /keys whose values differ \(sha256\): [1-9]/);
  t.regex(after.stdout, /\/core\/configmaps\/team-a\/cm-1/);
  t.regex(after.stdout, /verification FAILED/);
});
