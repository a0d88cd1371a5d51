/**
 * `npm start`: a single-node cluster on the embedded defaults (issue 10, point 4). Starts
 * svc-apiserver (SQLite under the data dir), creates a bootstrap token, starts svc-node joining
 * with it (containerd when its socket exists, otherwise the built-in CRI simulator), waits for
 * the node to be Ready and prints how to use kubectl. Ctrl-C stops both cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';

const root = resolve(__dirname, '..', '..');
const CONTAINERD = '/run/containerd/containerd.sock';

interface Options {
  dataDir: string;
  port: number;
  /** The node's runtime; default containerd when its socket exists, else the built-in simulator. */
  runtime?: string;
}

function parse(argv: readonly string[]): Options {
  const o: Options = { dataDir: resolve('.svc-data'), port: 6443 };
  for (const a of argv) {
    const eq = a.indexOf('=');
    const [k, v] = eq < 0 ? [a, ''] : [a.slice(0, eq), a.slice(eq + 1)];
    if (k === '--data-dir' && v) o.dataDir = resolve(v);
    else if (k === '--port' && v && /^\d+$/.test(v)) o.port = Number(v);
    else if (k === '--container-runtime-endpoint' && v) o.runtime = v;
    else {
      process.stderr.write(`usage: npm start -- [--data-dir=DIR] [--port=N] [--container-runtime-endpoint=unix:///run/containerd/containerd.sock|sim://]\nunknown argument: ${a}\n`);
      process.exit(2);
    }
  }
  return o;
}

function start(name: string, args: string[]): ChildProcess {
  const p = spawn(join(root, 'bin', name), args, { stdio: ['ignore', 'inherit', 'inherit'] });
  p.on('exit', (code, sig) => {
    if (!stopping) {
      process.stderr.write(`quickstart: ${name} exited (${sig ?? code}); stopping\n`);
      void shutdown(1);
    }
  });
  children.push({ name, proc: p });
  return p;
}

let stopping = false;
const children: { name: string; proc: ChildProcess }[] = [];

function exitOf(p: ChildProcess): Promise<string> {
  const describe = () => (p.signalCode ? `killed by ${p.signalCode}` : `exited ${p.exitCode}`);
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(describe());
  return new Promise((r) => p.once('exit', () => r(describe())));
}

/**
 * Stops both (the agent first, so it stops heartbeating before the server goes away) and says how
 * each ended. On Ctrl-C the terminal has already sent SIGINT to both; SIGTERM is for the other
 * ways here. Exits non-zero when either did not stop cleanly.
 */
async function shutdown(code: number): Promise<never> {
  if (stopping && code === 0) return new Promise<never>(() => undefined);
  stopping = true;
  const ended: string[] = [];
  for (const c of [...children].reverse()) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
    const how = await exitOf(c.proc);
    ended.push(`${c.name} ${how}`);
    if (how !== 'exited 0') code = code || 1;
  }
  process.stderr.write(`quickstart: stopped (${ended.join(', ')})\n`);
  process.exit(code);
}

async function call(agent: Agent, url: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await request(url, { method, dispatcher: agent, headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.body.text();
  const isJson = String(res.headers['content-type'] ?? '').startsWith('application/json');
  return { status: res.statusCode, json: isJson && text ? (JSON.parse(text) as unknown) : undefined };
}

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  const apiDir = join(o.dataDir, 'apiserver');
  start('svc-apiserver', [`--data-dir=${apiDir}`, '--bind-address=127.0.0.1', `--secure-port=${o.port}`, '--enable-bootstrap-token-auth', '--log-level=warn']);
  const pki = join(apiDir, 'pki');
  const admin = await until('the API server credentials', () =>
    existsSync(join(pki, 'admin.key'))
      ? new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) } })
      : undefined,
  30_000);
  const base = `https://127.0.0.1:${o.port}`;
  await until('svc-apiserver to be ready', async () => ((await call(admin, `${base}/readyz`)).status === 200 ? true : undefined), 60_000);

  // A bootstrap token for the node, as spec 2.7 lays it out (valid one hour).
  const id = randomBytes(3).toString('hex');
  const secret = randomBytes(8).toString('hex');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const created = await call(admin, `${base}/api/v1/namespaces/svc-system/secrets`, 'POST', {
    metadata: { name: `bootstrap-token-${id}` },
    type: 'bootstrap.svc.io/token',
    data: {
      'token-id': b64(id),
      'token-secret': b64(secret),
      expiration: b64(new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z')),
      'usage-bootstrap-authentication': b64('true'),
      'usage-bootstrap-signing': b64('true'),
    },
  });
  if (created.status !== 201) throw new Error(`creating the bootstrap token failed: ${created.status} ${JSON.stringify(created.json)}`);
  const nodeDir = join(o.dataDir, 'node');
  mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
  const ca = readFileSync(join(pki, 'ca.crt')).toString('base64');
  const bootstrap = join(nodeDir, 'bootstrap.kubeconfig');
  writeFileSync(
    bootstrap,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: svc\n  cluster:\n    server: ${base}\n    certificate-authority-data: ${ca}`,
      'users:',
      `- name: bootstrap\n  user:\n    token: ${id}.${secret}`,
      'contexts:',
      '- name: bootstrap\n  context:\n    cluster: svc\n    user: bootstrap',
      'current-context: bootstrap',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const runtime = o.runtime ?? (existsSync(CONTAINERD) ? `unix://${CONTAINERD}` : 'sim://quickstart');
  if (runtime.startsWith('sim://')) {
    // The simulator's registry serves every image reference, so `kubectl run web --image=nginx` runs.
    process.stderr.write(
      o.runtime
        ? 'quickstart: svc-node uses the built-in CRI simulator (pods run no processes)\n'
        : `quickstart: no container runtime at ${CONTAINERD}; svc-node uses the built-in CRI simulator (pods run no processes)\n`,
    );
  }
  const config = join(nodeDir, 'config.yaml');
  writeFileSync(config, 'apiVersion: nodeagent.config.svc.io/v1beta1\nkind: NodeAgentConfiguration\nfailSwapOn: false\n');
  const nodeName = hostname().toLowerCase();
  start('svc-node', [
    `--config=${config}`,
    `--root-dir=${join(nodeDir, 'root')}`,
    `--lock-file=${join(nodeDir, 'svc-node.lock')}`,
    `--bootstrap-kubeconfig=${bootstrap}`,
    `--kubeconfig=${join(nodeDir, 'kubeconfig')}`,
    `--container-runtime-endpoint=${runtime}`,
    `--port=${o.port + 1}`,
    '--log-level=warn',
  ]);
  await until(`node ${nodeName} to be Ready`, async () => {
    const n = await call(admin, `${base}/api/v1/nodes/${nodeName}`);
    const node = n.json as { status?: { conditions?: Array<{ type: string; status?: string }> } } | undefined;
    const ready = (node?.status?.conditions ?? []).find((c) => c.type === 'Ready');
    return ready?.status === 'True' ? true : undefined;
  }, 120_000);
  const kubeconfig = join(apiDir, 'admin.kubeconfig');
  process.stdout.write(
    `\nsvc is up: node ${nodeName} is Ready.\n  kubeconfig: ${kubeconfig}\n  try:        kubectl --kubeconfig ${kubeconfig} get nodes\nPress Ctrl-C to stop.\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`quickstart: ${err instanceof Error ? err.message : String(err)}\n`);
  void shutdown(1);
});
