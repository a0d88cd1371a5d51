import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentMain, startAgent, writeAgentConfig } from './agent-process';

const run = (args: string[]) => spawnSync(process.execPath, [agentMain, ...args], { encoding: 'utf8', timeout: 20_000 });
const noStack = /at .*\.js:\d+/;

test('--help prints help and exits 0', (t) => {
  const r = run(['--help']);
  t.is(r.status, 0);
  t.regex(r.stdout, /--bootstrap-kubeconfig/);
});

test('bad flags and bad configuration exit 78 (EX_CONFIG) with a message naming the problem, never a stack trace', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-cli-'));
  try {
    const r = run(['--no-such-flag']);
    t.is(r.status, 78);
    t.regex(r.stderr, /^svc-node: .*unknown flag: --no-such-flag/);
    t.notRegex(r.stderr, noStack);
    const cfg = join(dir, 'bad.yaml');
    writeFileSync(cfg, 'apiVersion: nodeagent.config.svc.io/v1beta1\nkind: NodeAgentConfiguration\nmaxPods: many\n');
    const b = run([`--config=${cfg}`]);
    t.is(b.status, 78);
    t.true(b.stderr.includes(cfg));
    t.regex(b.stderr, /maxPods/);
    t.notRegex(b.stderr, noStack);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a missing kubeconfig without a bootstrap kubeconfig stops start-up with a clear message', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-cli-'));
  try {
    const r = run([`--root-dir=${join(dir, 'root')}`, `--lock-file=${join(dir, 'lock')}`, `--config=${writeAgentConfig(dir)}`, `--kubeconfig=${join(dir, 'nope.conf')}`]);
    t.is(r.status, 1);
    const line = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'svc-node cannot start');
    t.truthy(line, r.stdout);
    t.is(line!['error'], `kubeconfig ${join(dir, 'nope.conf')} does not exist and no --bootstrap-kubeconfig was given`);
    t.notRegex(r.stdout + r.stderr, noStack);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a root directory that cannot be created stops start-up with one readable line (exit 1, retried by the unit)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-cli-'));
  try {
    // A regular file where a parent directory should be: mkdir fails (ENOTDIR) even for root,
    // like a read-only or full /var/lib would (EROFS, ENOSPC).
    writeFileSync(join(dir, 'not-a-dir'), '');
    const root = join(dir, 'not-a-dir', 'root');
    const r = run([`--root-dir=${root}`, `--lock-file=${join(dir, 'lock')}`, `--config=${writeAgentConfig(dir)}`]);
    t.is(r.status, 1);
    const line = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'svc-node cannot start');
    t.truthy(line, r.stdout);
    t.regex(String(line!['error']), new RegExp(`^cannot prepare the root directory ${root}: ENOTDIR`));
    t.notRegex(r.stdout + r.stderr, noStack);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a second agent on the same lock file refuses to run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-cli-'));
  // Standalone (no --kubeconfig): the first agent holds the lock and idles.
  const first = startAgent({ dir, nodeName: 'lock-test' });
  try {
    await first.waitForLog('running standalone');
    const r = run([`--root-dir=${join(dir, 'root2')}`, `--lock-file=${join(dir, 'svc-node.lock')}`, `--config=${writeAgentConfig(dir)}`]);
    t.is(r.status, 1);
    t.regex(r.stdout, /is held by another svc-node process \(pid \d+\)/);
    t.is(await first.stop('SIGTERM'), 0);
  } finally {
    await first.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
