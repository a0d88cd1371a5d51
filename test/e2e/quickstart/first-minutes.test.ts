/**
 * Issue 17, item 6: the first ten minutes after the quick start, with stock kubectl 1.32. The
 * quick start program (what `npm start` runs after its build) brings up svc-apiserver and a
 * svc-node that joins with a bootstrap token on the CRI simulator; then `kubectl run web
 * --image=nginx` must be Running (the simulated registry serves any image) and `kubectl logs
 * web` must answer (the node trusts the cluster CA for the API server's client certificate
 * without authentication.x509.clientCAFile). Also: both --help tables keep their columns apart.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { repoRoot } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

/** The compiled tree this test runs from: <repo>/<outDir>/test/e2e/quickstart. */
const dist = join(__dirname, '..', '..', '..');

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port N with N+1 free too: the quick start puts svc-apiserver on N and the agent's server on N+1. */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    if ((await portFree(base)) && (await portFree(base + 1))) return base;
  }
  throw new Error('no two consecutive free ports');
}

test('after the quick start (simulator), kubectl run --image=nginx is Running and kubectl logs answers without a client CA configured', async (t) => {
  t.timeout(240_000);
  const work = mkdtempSync(join(tmpdir(), 'svc-first-minutes-'));
  const dataDir = join(work, 'data');
  const port = await freePortPair();
  const p = spawn(process.execPath, [join(dist, 'common', 'quickstart.js'), `--data-dir=${dataDir}`, `--port=${port}`, '--container-runtime-endpoint=sim://quickstart'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  try {
    await Promise.race([
      eventually('the quick start to say the node is Ready', () => (/svc is up: node \S+ is Ready\./.test(out) ? true : undefined), 180_000, 300),
      exited.then(() => Promise.reject(new Error(`the quick start exited before the node was Ready:\n${out}`))),
    ]);
    const kubeconfig = join(dataDir, 'apiserver', 'admin.kubeconfig');
    // The node joined with a bootstrap token and has no client CA of its own configured.
    t.notRegex(readFileSync(join(dataDir, 'node', 'config.yaml'), 'utf8'), /clientCAFile/);

    const created = await kubectl(kubeconfig, ['run', 'web', '--image=nginx']);
    t.is(created.code, 0, created.stderr);
    const pod = await eventually('the pod Running', async () => {
      const r = await kubectl(kubeconfig, ['get', 'pod', 'web', '-o', 'json']);
      const o = r.code === 0 ? JSON.parse(r.stdout) : undefined;
      return o?.status?.phase === 'Running' ? o : undefined;
    }, 90_000);
    t.is(pod.status.containerStatuses[0].image, 'docker.io/library/nginx:latest');
    t.true(pod.status.containerStatuses[0].ready);
    const shown = await kubectl(kubeconfig, ['get', 'pods']);
    t.regex(shown.stdout, /^web\s+1\/1\s+Running\s/m, shown.stdout);

    // pods/log reaches the agent with the API server's kubelet-client certificate: a 401 here
    // would mean the agent does not trust the cluster CA.
    const logs = await kubectl(kubeconfig, ['logs', 'web']);
    t.is(logs.code, 0, logs.stderr);
    const tail = await kubectl(kubeconfig, ['logs', 'web', '--tail=1', '--timestamps']);
    t.is(tail.code, 0, tail.stderr);
  } finally {
    if (p.exitCode === null && p.signalCode === null) process.kill(-p.pid!, 'SIGINT');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    if (p.exitCode === null && p.signalCode === null) process.kill(-p.pid!, 'SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
  t.regex(out, /quickstart: stopped \(svc-node exited 0, svc-apiserver exited 0\)/, out);
});

/** The flag rows of a --help text: [the head, the column its usage starts at] for lines that start a flag. */
function flagRows(text: string): Array<{ line: string; column: number; head: string }> {
  return text
    .split('\n')
    .filter((l) => /^\s+(-\w, )?--[a-z]/.test(l))
    .map((line) => {
      const m = /^(\s+(?:-\w, )?--\S+(?: \S+)?)(\s+)(\S.*)?$/.exec(line);
      return { line, head: m?.[1] ?? line, column: m?.[3] !== undefined ? m[1].length + m[2].length : -1 };
    });
}

for (const [name, argv] of [
  ['svc-apiserver', [join(repoRoot, 'bin', 'svc-apiserver'), '--help']],
  ['svc-node', [join(repoRoot, 'bin', 'svc-node'), '--help']],
] as const) {
  test(`${name} --help: flag and usage columns never run into each other; on a terminal, lines wrap to its width`, (t) => {
    const plain = spawnSync(argv[0], [argv[1]], { encoding: 'utf8', timeout: 20_000 });
    t.is(plain.status, 0, plain.stderr);
    const rows = flagRows(plain.stdout);
    t.true(rows.length > 10);
    const columns = new Set(rows.map((r) => r.column));
    t.is(columns.size, 1, `one usage column: ${[...columns].join(', ')}`);
    const longest = Math.max(...rows.map((r) => r.head.length));
    t.is([...columns][0], longest + 3, 'three spaces after the longest flag, as pflag');

    // A terminal 100 columns wide (script(1) gives the process one).
    const tty = spawnSync('script', ['-qec', `stty cols 100; ${argv[0]} ${argv[1]}`, '/dev/null'], { encoding: 'utf8', timeout: 20_000 });
    t.is(tty.status, 0, tty.stderr);
    const lines = tty.stdout.replace(/\r/g, '').split('\n');
    const tooLong = lines.filter((l) => l.length > 100 && !/^\s*\S+$/.test(l));
    t.deepEqual(tooLong, [], 'no line beyond the terminal (but a single unbreakable word)');
    t.true(lines.length > plain.stdout.split('\n').length, 'long usages wrapped');
  });
}
