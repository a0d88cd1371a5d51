import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRootDirLayout, rootDirLayout } from '../../../../agent/platform/root-dir';
import type { Log } from '../../../../agent/platform/logger';

function tmp(t: import('ava').ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-root-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function recordingLog(): Log & { lines: { level: string; obj: object; msg: string }[] } {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const at = (level: string) => (obj: object, msg: string) => lines.push({ level, obj, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const mode = (p: string) => statSync(p).mode & 0o7777;

test('creates the layout with exact modes regardless of umask', async (t) => {
  const root = join(tmp(t), 'svc-node');
  const old = process.umask(0o000);
  try {
    const res = await ensureRootDirLayout({ rootDir: root, certDir: join(root, 'pki') });
    t.is(res.created.length, rootDirLayout.length + 1);
  } finally {
    process.umask(old);
  }
  t.is(mode(root), 0o750);
  t.is(mode(join(root, 'checkpoints')), 0o700);
  t.is(mode(join(root, 'pki')), 0o700);
  t.is(mode(join(root, 'pods')), 0o750);
  t.is(mode(join(root, 'plugins_registry')), 0o750);
  t.is(mode(join(root, 'pod-resources')), 0o750);
  t.is(mode(join(root, 'device-plugins')), 0o750);
  t.is(mode(join(root, 'seccomp')), 0o750);
  t.is(mode(join(root, 'image_manager', 'pulled')), 0o700);
});

test('tightens directories that are too open, logs it, and never loosens', async (t) => {
  const root = join(tmp(t), 'svc-node');
  mkdirSync(join(root, 'checkpoints'), { recursive: true });
  mkdirSync(join(root, 'pods'));
  chmodSync(root, 0o777);
  chmodSync(join(root, 'checkpoints'), 0o755);
  chmodSync(join(root, 'pods'), 0o700);
  const log = recordingLog();
  const res = await ensureRootDirLayout({ rootDir: root, certDir: join(root, 'pki'), log });
  t.is(mode(root), 0o750);
  t.is(mode(join(root, 'checkpoints')), 0o700);
  t.is(mode(join(root, 'pods')), 0o700, 'stricter than needed is left alone');
  t.deepEqual(res.tightened, [
    { path: root, from: 0o777, to: 0o750 },
    { path: join(root, 'checkpoints'), from: 0o755, to: 0o700 },
  ]);
  const warns = log.lines.filter((l) => l.level === 'warn');
  t.is(warns.length, 2);
  t.deepEqual(warns[1].obj, { path: join(root, 'checkpoints'), from: '0755', to: '0700' });
});

test('is idempotent', async (t) => {
  const root = join(tmp(t), 'svc-node');
  await ensureRootDirLayout({ rootDir: root, certDir: join(root, 'pki') });
  const res = await ensureRootDirLayout({ rootDir: root, certDir: join(root, 'pki') });
  t.deepEqual(res, { created: [], tightened: [] });
});

test('a cert dir outside the root dir is created 0700 too', async (t) => {
  const base = tmp(t);
  await ensureRootDirLayout({ rootDir: join(base, 'root'), certDir: join(base, 'etc', 'pki') });
  t.is(mode(join(base, 'etc', 'pki')), 0o700);
});

test('a file where a directory belongs is an error naming it', async (t) => {
  const root = join(tmp(t), 'svc-node');
  mkdirSync(root);
  writeFileSync(join(root, 'pods'), 'x');
  await t.throwsAsync(ensureRootDirLayout({ rootDir: root, certDir: join(root, 'pki') }), { message: `${join(root, 'pods')} exists and is not a directory` });
});
