/**
 * The documentation's examples cannot rot: every shell block marked `<!-- doc-test: NAME -->` in
 * README.md and docs/*.md runs against a real svc-apiserver and a real svc-node (sim:// runtime)
 * started here, with the expected output blocks checked, and every NodeAgentConfiguration
 * example is loaded with the agent's configuration loader. Markers: docs/README.md.
 * Needs kubectl (/usr/bin/kubectl), openssl, jq and containerd (for `containerd config dump`).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadAgentConfig } from '../../../agent/config/load';
import { ConfigError } from '../../../agent/config/config-error';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { freePort } from '../../helpers/free-port';
import { eventually, kubectlJson, startAgent, type AgentProcess } from '../agent/agent-process';
import { isAgentConfig, parseDoc, unmatchedLines, type DocBlock } from './doc-blocks';

/** The compiled tree this test runs from (<outDir>/test/e2e/docs → <outDir>). */
const tree = join(__dirname, '..', '..', '..');
const repoRoot = join(tree, '..');
const NODE = 'doc-node-1';

/** README.md and docs/*.md (the generated references hold no examples). */
function docFiles(): string[] {
  return ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((n) => n.endsWith('.md')).map((n) => join('docs', n))].sort();
}

const parsed = new Map<string, DocBlock[]>();
const parseErrors: string[] = [];
for (const doc of docFiles()) {
  try {
    parsed.set(doc, parseDoc(readFileSync(join(repoRoot, doc), 'utf8')));
  } catch (e) {
    parseErrors.push(`${doc}: ${(e as Error).message}`);
  }
}
const runnable = [...parsed.entries()].filter(([, blocks]) => blocks.some((b) => b.test));

let work = '';
let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let env: NodeJS.ProcessEnv = {};

function requireTool(path: string, pkg: string): void {
  if (!existsSync(path)) throw new Error(`the documentation examples need ${path}: apt-get install ${pkg}`);
}

/** A bootstrap kubeconfig for the first node, the same shape docs/join-node.md makes with kubectl. */
function bootstrapKubeconfig(file: string, token: string): void {
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: svc\n  cluster:\n    server: ${api!.url}\n    certificate-authority-data: ${Buffer.from(api!.caPem).toString('base64')}\n` +
      `users:\n- name: bootstrap\n  user:\n    token: ${token}\ncontexts:\n- name: bootstrap\n  context: {cluster: svc, user: bootstrap}\ncurrent-context: bootstrap\n`,
    { mode: 0o600 },
  );
}

test.before(async () => {
  requireTool('/usr/bin/kubectl', 'kubectl');
  requireTool('/usr/bin/openssl', 'openssl');
  requireTool('/usr/bin/jq', 'jq');
  requireTool('/usr/bin/containerd', 'containerd');
  work = mkdtempSync(join(tmpdir(), 'svc-doc-examples-'));
  // svc-node and svc-apiserver on PATH run this compiled tree, as the installed launchers do.
  const bin = join(work, 'bin');
  mkdirSync(bin);
  for (const [name, main] of [['svc-node', 'agent/main.js'], ['svc-apiserver', 'apiserver/main.js']] as const) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec '${process.execPath}' '${join(tree, main)}' "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  // At info level the server says why it refused a credential (a failed join shows the reason).
  api = await startApiServer({ args: ['--enable-bootstrap-token-auth'], logLevel: 'info' });
  // The first node joins with a bootstrap token, so it has the client certificate and kubeconfig
  // the troubleshooting examples look at.
  const id = 'd0c5ab';
  const secret = 'f00dfeedcafe1234';
  const r = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/svc-system/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}` },
    type: 'bootstrap.svc.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, expiration: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'), 'usage-bootstrap-authentication': 'true' },
  });
  if (r.status !== 201) throw new Error(`creating the bootstrap token: ${r.status} ${r.text}`);
  const nodeDir = join(work, 'node-1');
  mkdirSync(nodeDir);
  bootstrapKubeconfig(join(nodeDir, 'bootstrap.kubeconfig'), `${id}.${secret}`);
  agent = startAgent({
    dir: nodeDir,
    nodeName: NODE,
    kubeconfig: join(nodeDir, 'node.kubeconfig'),
    bootstrapKubeconfig: join(nodeDir, 'bootstrap.kubeconfig'),
    args: [`--port=${await freePort()}`],
  });
  await eventually(
    `node ${NODE} Ready`,
    async () => {
      const n = await kubectlJson(api!.kubeconfig, ['get', 'node', NODE]);
      return (n['status']?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    },
    90_000,
  );
  env = {
    PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    HOME: work,
    LANG: 'C.UTF-8',
    KUBECONFIG: api.kubeconfig,
    SVC_NODE: NODE,
    SVC_NODE_ROOT: join(nodeDir, 'root'),
    SVC_NODE_KUBECONFIG: join(nodeDir, 'node.kubeconfig'),
    SVC_NODE_PORT: String(await freePort()),
  };
});

test.after.always(async () => {
  await agent?.stop('SIGTERM');
  await api?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface RunResult {
  code: number | null;
  output: string;
  pgid: number;
}

/** Runs one shell example in its own process group (so what it leaves in the background can be stopped). */
function runBlock(script: string, cwd: string, boundMs = 150_000): Promise<RunResult> {
  return new Promise((resolve) => {
    const p = spawn('/bin/bash', ['-euo', 'pipefail', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d) => (output += d));
    p.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n(doc-examples: killed after ${boundMs} ms)`;
      killGroup(p.pid!, 'SIGKILL');
    }, boundMs);
    // 'exit', not 'close': a background process may keep the pipes open; give the rest of the output a moment.
    p.once('exit', (code) => {
      clearTimeout(timer);
      setTimeout(() => resolve({ code, output, pgid: p.pid! }), 200);
    });
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone
  }
}

/** SIGTERM to each group, SIGKILL to what is left after 20 s; resolves when every group is gone. */
async function stopGroups(pgids: number[]): Promise<void> {
  for (const g of pgids) killGroup(g, 'SIGTERM');
  const end = Date.now() + 20_000;
  while (pgids.some((g) => killGroup(g, 0))) {
    if (Date.now() > end) for (const g of pgids) killGroup(g, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('every doc-test marker is attached to a block (docs/README.md describes the markers)', (t) => {
  t.deepEqual(parseErrors, []);
});

test('the documents that promise tested examples have them', (t) => {
  const names = new Map(runnable.map(([doc, blocks]) => [doc, blocks.filter((b) => b.test).map((b) => b.test!)]));
  t.deepEqual(names.get('docs/join-node.md'), ['create-token', 'bootstrap-kubeconfig', 'start-second-node', 'node-ready', 'node-identity', 'approve-by-hand']);
  t.true((names.get('docs/troubleshooting.md') ?? []).includes('config-error'));
  t.true((names.get('docs/containerd.md') ?? []).includes('containerd-config'));
});

test('every NodeAgentConfiguration example loads with the agent configuration loader (or, when marked invalid, is rejected)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-doc-configs-'));
  try {
    let n = 0;
    for (const [doc, blocks] of parsed) {
      for (const b of blocks.filter(isAgentConfig)) {
        const file = join(dir, `${n++}.yaml`);
        writeFileSync(file, b.content);
        const where = `${doc}:${b.line}`;
        try {
          await loadAgentConfig([`--config=${file}`], { hostname: () => 'doc-node' });
          t.not(b.config, 'invalid', `${where} is marked invalid but loads`);
        } catch (e) {
          t.true(e instanceof ConfigError, `${where}: ${(e as Error).message}`);
          t.is(b.config, 'invalid', `${where} does not load: ${(e as Error).message}`);
        }
      }
    }
    t.true(n >= 3, `found ${n} configuration examples`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The end of every *.log an example wrote (background daemons log there): what a failure report needs. */
/** The API server's refusals and warnings (authentication, admission) of the run so far, last 30. */
function apiServerTail(): string {
  const lines = (api?.output() ?? '').split('\n').filter((l) => /"level":[4-6]0|[Bb]ootstrap|nauthori[sz]ed/.test(l));
  return `\n--- svc-apiserver, warnings and refusals (last 30 of ${lines.length}):\n${lines.slice(-30).join('\n')}`;
}

function logTails(cwd: string): string {
  return readdirSync(cwd)
    .filter((f) => f.endsWith('.log'))
    .map((f) => `\n--- last lines of ${f}:\n${readFileSync(join(cwd, f), 'utf8').split('\n').slice(-40).join('\n')}`)
    .join('');
}

for (const [doc, blocks] of runnable) {
  test.serial(`${doc}: the marked examples run and print what the document shows`, async (t) => {
    const cwd = mkdtempSync(join(work, 'doc-'));
    const outputs = new Map<string, string>();
    const groups: number[] = [];
    const failures: string[] = [];
    try {
      for (const b of blocks) {
        if (b.file) {
          mkdirSync(dirname(join(cwd, b.file)), { recursive: true });
          writeFileSync(join(cwd, b.file), b.content);
        }
        if (b.test) {
          const r = await runBlock(b.content, cwd);
          groups.push(r.pgid);
          outputs.set(b.test, r.output);
          t.log(`${doc} ${b.test}: exit ${r.code}`);
          if (r.code !== 0) {
            failures.push(`${doc}: doc-test ${b.test} (line ${b.line}) exited ${r.code}:\n${r.output}${logTails(cwd)}${apiServerTail()}`);
            break; // later examples build on this one
          }
        }
        if (b.output) {
          const missing = unmatchedLines(b.content, outputs.get(b.output)!);
          if (missing.length > 0) failures.push(`${doc}: doc-test ${b.output} did not print (line ${b.line}):\n${missing.join('\n')}\n--- it printed:\n${outputs.get(b.output)}`);
        }
      }
    } finally {
      await stopGroups(groups);
    }
    t.deepEqual(failures, []);
    t.true(outputs.size > 0);
  });
}
