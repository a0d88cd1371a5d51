/**
 * Issue 10, point 4: the README's quick start works on a fresh clone. The repository's HEAD is
 * cloned to a temp dir (uncommitted changes are not in it: that is the point), the README's
 * command runs there, the node must become Ready, the printed kubectl command must show it, and
 * Ctrl-C (SIGINT to the whole foreground process group, as a terminal sends it) must stop
 * everything cleanly.
 *
 * `npm ci` is replaced by a symlink to this tree's node_modules: a real `npm ci` needs the
 * network (better-sqlite3 and the other native modules fetch prebuilt binaries or headers) and
 * minutes, and `npm ci --offline` from the npm cache is not reliable on CI machines whose cache
 * was never filled. Everything after that, including the TypeScript build (`npm start` runs
 * `npm run build`), runs in the clone.
 */
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** The compiled tree this test runs from is <repo>/<outDir>/test/e2e/quickstart. */
const repoRoot = join(__dirname, '..', '..', '..', '..');

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A port N with N+1 free too: npm start puts svc-apiserver on --port and svc-node on the next one. */
async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    if ((await portFree(base)) && (await portFree(base + 1))) return base;
  }
  throw new Error('no two consecutive free ports');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose command line or working directory is inside dir (what the quick start left running). */
function processesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cmd.includes(dir) || cwd.startsWith(dir)) out.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test('on a fresh clone, the README command brings up a Ready node that the printed kubectl command shows, and Ctrl-C stops everything', async (t) => {
  // The build runs in the clone; on a machine shared with other jobs it can take minutes.
  t.timeout(480_000);
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  t.true(readme.includes('npm ci && npm start'), 'README.md states the quick start command this test runs');

  const work = realpathSync(mkdtempSync(join(tmpdir(), 'svc-quickstart-')));
  const clone = join(work, 'svc');
  let pgid = 0;
  try {
    await run('git', ['clone', '--quiet', '--no-hardlinks', repoRoot, clone]);
    const nodeModules = join(repoRoot, 'node_modules');
    if (!existsSync(join(nodeModules, '.bin', 'tsc'))) throw new Error(`${nodeModules} has no TypeScript: run npm ci in ${repoRoot} first`);
    symlinkSync(realpathSync(nodeModules), join(clone, 'node_modules'));

    const port = await freePortPair();
    const dataDir = join(work, 'data');
    // detached: its own process group, the foreground job of this "terminal".
    const p = spawn('npm', ['start', '--', `--data-dir=${dataDir}`, `--port=${port}`], { cwd: clone, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    pgid = p.pid!;
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => p.once('exit', (code, signal) => r({ code, signal })));

    const kubeconfig = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "is Ready" line within 420 s:\n${out}`)), 420_000);
      const check = () => {
        const m = /svc is up: node \S+ is Ready\.\n\s+kubeconfig: (\S+)\n\s+try:\s+(.+)\n/.exec(out);
        if (m) {
          clearTimeout(timer);
          p.stdout.off('data', check);
          resolve(m[1]);
        }
      };
      p.stdout.on('data', check);
      void exited.then((e) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited (${e.signal ?? e.code}) before the node was Ready:\n${out}`));
      });
    });
    t.is(kubeconfig, join(dataDir, 'apiserver', 'admin.kubeconfig'));
    // The runtime: containerd when its socket exists, else the simulator with a notice.
    const notice = /no container runtime at \/run\/containerd\/containerd\.sock; svc-node uses the built-in CRI simulator/;
    if (existsSync('/run/containerd/containerd.sock')) t.notRegex(out, notice);
    else t.regex(out, notice);

    // The command it printed, as printed.
    const tryLine = /try:\s+(.+)\n/.exec(out)![1].trim();
    t.is(tryLine, `kubectl --kubeconfig ${kubeconfig} get nodes`);
    const [cmd, ...args] = tryLine.split(' ');
    const got = await run(cmd === 'kubectl' ? '/usr/bin/kubectl' : cmd, args, { timeout: 30_000 });
    t.regex(got.stdout, /^\S+\s+Ready\s/m, got.stdout);
    const nodes = JSON.parse((await run('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'], { timeout: 30_000 })).stdout) as {
      items: { status: { conditions: { type: string; status: string }[] } }[];
    };
    t.is(nodes.items.length, 1);
    t.true(nodes.items[0].status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));

    // Ctrl-C: SIGINT to the foreground process group (npm, the quick start, both daemons).
    process.kill(-pgid, 'SIGINT');
    // npm itself dies of the SIGINT at once (as `npm run` does on Ctrl-C: the shell shows ^C);
    // the quick start finishes stopping both daemons and reports how each ended.
    const npmExit = await exited;
    t.true(npmExit.code === 0 || npmExit.signal === 'SIGINT', JSON.stringify(npmExit));
    for (let i = 0; i < 150 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 200));
    t.regex(out, /quickstart: stopped \(svc-node exited 0, svc-apiserver exited 0\)\n/, out);
    t.false(groupAlive(pgid), `processes of the quick start are still running:\n${processesUnder(clone).join('\n')}`);
    t.deepEqual(processesUnder(clone), []);
    t.notRegex(out, /exited \(\d+\); stopping|failed unexpectedly/, out);
  } finally {
    if (pgid && groupAlive(pgid)) {
      process.kill(-pgid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
    }
    rmSync(work, { recursive: true, force: true });
  }
});
