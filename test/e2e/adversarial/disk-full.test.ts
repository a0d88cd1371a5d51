/**
 * Adversarial probe, a full disk (issue 16, defect 9): a real svc-apiserver whose --data-dir is a
 * small tmpfs the test mounts (the suite runs as root; a failed mount fails the test). The disk
 * is filled: writes answer 503 and /readyz fails its store-write check (so load balancers route
 * away), while /livez stays ok (restarting would not free the disk). The space is freed: /readyz
 * and writes recover. Bounded by counts: the filler writes at most the tmpfs size, the writes and
 * readiness polls are counted.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

const TMPFS_MIB = 48;

/** Writes zeros into path until the file system is full (ENOSPC); at most the tmpfs size. */
function fill(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    // Each size at most as many times as fits in what the larger one left (plus one).
    for (const [chunk, times] of [[Buffer.alloc(1 << 20), TMPFS_MIB + 1], [Buffer.alloc(4096), 257], [Buffer.alloc(1), 4097]] as const) {
      for (let i = 0; i < times; i++) {
        try {
          written += writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

async function get(s: RunningApiServer, path: string): Promise<{ status: number; text: string }> {
  const res = await request(`${s.url}${path}`, { dispatcher: s.admin });
  return { status: res.statusCode, text: await res.body.text() };
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { blob: 'x'.repeat(200_000) } });

test('a full disk fails writes with 503 and /readyz with store-write; freeing it recovers both', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-disk-full-'));
  // Not a skip: the probe class is part of the suite, and the suite runs as root.
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MIB}m,mode=0700`, 'tmpfs', dir]);
  let s: RunningApiServer | undefined;
  t.teardown(async () => {
    await s?.stop('SIGKILL');
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  s = await startApiServer({ dataDir: dir });
  t.is((await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/default/configmaps`, configMap('before'))).status, 201);

  const filler = join(dir, 'filler');
  t.true(fill(filler) > 0);
  // SQLite may still place a few writes in WAL space it already owns; the store then runs out.
  let failed: Awaited<ReturnType<typeof call>> | undefined;
  for (let i = 0; i < 60 && !failed; i++) {
    const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/default/configmaps`, configMap(`full-${i}`));
    if (r.status !== 201) failed = r;
  }
  t.truthy(failed, 'a write failed once the disk was full');
  t.is(failed?.status, 503, failed?.text);
  t.like(failed?.body, { kind: 'Status', reason: 'ServiceUnavailable', code: 503 });

  const ready = await get(s, '/readyz?verbose');
  t.is(ready.status, 500, ready.text);
  t.regex(ready.text, /\[-\]store-write failed/);
  t.regex(ready.text, /\[\+\]etcd ok/, 'the store still reads');
  const one = await get(s, '/readyz/store-write');
  t.is(one.status, 500);
  t.regex(one.text, /store/);
  t.is((await get(s, '/livez')).status, 200, 'a full disk is no reason to restart the server');
  // Asking again does not make it ready while the disk stays full.
  for (let i = 0; i < 3; i++) t.is((await get(s, '/readyz')).status, 500);

  unlinkSync(filler);
  let recovered = false;
  for (let i = 0; i < 100 && !recovered; i++) {
    recovered = (await get(s, '/readyz')).status === 200;
    if (!recovered) await new Promise((r) => setTimeout(r, 100));
  }
  t.true(recovered, '/readyz is ok again once the disk has space');
  const after = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/default/configmaps`, configMap('after'));
  t.is(after.status, 201, after.text);
  t.regex((await get(s, '/readyz?verbose')).text, /\[\+\]store-write ok/);
});
