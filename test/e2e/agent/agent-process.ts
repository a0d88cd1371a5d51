/**
 * Runs the built svc-node (agent/main.js of the same compiled tree as this test) as a real
 * process with its own root dir, lock file and config, and collects its JSON log lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOk } from '../../helpers/real-clients';

export const agentMain = join(__dirname, '..', '..', '..', 'agent', 'main.js');

export interface AgentProcess {
  proc: ChildProcess;
  /** Parsed JSON log lines so far. */
  logs: Record<string, unknown>[];
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves the first log line whose msg contains text (bounded; rejects with the output on timeout or exit). */
  waitForLog(text: string, boundMs?: number): Promise<Record<string, unknown>>;
  /** Sends the signal and resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface AgentOptions {
  /** A temp dir owned by the test; root-dir, lock file and config go under it. */
  dir: string;
  nodeName: string;
  kubeconfig?: string;
  bootstrapKubeconfig?: string;
  /** Extra NodeAgentConfiguration fields (YAML lines). */
  configLines?: string[];
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Runs the agent in this named network namespace (/run/netns/<netns>) through `nsenter --net`. */
  netns?: string;
}

/** The config every e2e agent uses: swap allowed (CI machines may have it), fast heartbeats so short grace periods work. */
export function writeAgentConfig(dir: string, extra: string[] = []): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    // The built-in CRI simulator: these tests are about joining and heartbeats, not containers
    // (test/e2e/pods runs real containerd).
    [
      'apiVersion: nodeagent.config.svc.io/v1beta1',
      'kind: NodeAgentConfiguration',
      'failSwapOn: false',
      ...(extra.some((l) => l.startsWith('containerRuntimeEndpoint:')) ? [] : ['containerRuntimeEndpoint: sim://']),
      // The network proxy and NetworkPolicy enforcement would program the host's own nftables
      // tables from every test's cluster (tests running at once would replace each other's); their
      // tests run them in network namespaces of their own (test/e2e/proxy, test/e2e/netpol).
      // Pod logs under the test's own dir: the default (/var/log/pods) is the host's, which every
      // run would litter (the directories of pods that never had their agent's cleanup).
      ...(extra.some((l) => l.startsWith('podLogsDir:')) ? [] : [`podLogsDir: ${join(dir, 'pod-logs')}`]),
      ...(extra.some((l) => l.startsWith('proxy:')) ? [] : ['proxy:', '  mode: disabled']),
      ...(extra.some((l) => l.startsWith('networkPolicy:')) ? [] : ['networkPolicy:', '  mode: disabled']),
      ...extra,
    ].join('\n') + '\n',
  );
  return file;
}

export function startAgent(o: AgentOptions): AgentProcess {
  mkdirSync(o.dir, { recursive: true });
  const config = writeAgentConfig(o.dir, o.configLines);
  const args = [
    agentMain,
    `--hostname-override=${o.nodeName}`,
    `--root-dir=${join(o.dir, 'root')}`,
    `--lock-file=${join(o.dir, 'svc-node.lock')}`,
    `--config=${config}`,
    ...(o.kubeconfig ? [`--kubeconfig=${o.kubeconfig}`] : []),
    ...(o.bootstrapKubeconfig ? [`--bootstrap-kubeconfig=${o.bootstrapKubeconfig}`] : []),
    ...(o.args ?? []),
  ];
  const [cmd, argv] = o.netns ? ['/usr/bin/nsenter', [`--net=/run/netns/${o.netns}`, '--', process.execPath, ...args]] : [process.execPath, args];
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env });
  let out = '';
  let partial = '';
  const logs: Record<string, unknown>[] = [];
  const waiters: { text: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  // pino's msg is a string; a line without one matches nothing.
  const msgOf = (l: Record<string, unknown>): string => (typeof l['msg'] === 'string' ? l['msg'] : '');
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      logs.push(parsed);
      for (const w of [...waiters]) {
        if (msgOf(parsed).includes(w.text)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(parsed);
        }
      }
    }
  });
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return {
    proc,
    logs,
    output: () => out,
    exited,
    waitForLog(text, boundMs = 30_000) {
      const seen = logs.find((l) => msgOf(l).includes(text));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line "${text}" within ${boundMs} ms:\n${out}`)), boundMs);
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`svc-node exited (${code}) before logging "${text}":\n${out}`));
        });
        waiters.push({
          text,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Runs the real kubectl and parses its JSON output. */
export async function kubectlJson<T = Record<string, any>>(kubeconfig: string, args: string[]): Promise<T> {
  return JSON.parse(await kubectlOk(kubeconfig, [...args, '-o', 'json'], { timeoutMs: 20_000 })) as T;
}

/** Runs kubectl with a manifest on stdin (apply/create). */
export function kubectlStdin(kubeconfig: string, args: string[], input: string): Promise<string> {
  return kubectlOk(kubeconfig, args, { input, timeoutMs: 20_000 });
}

/** Polls fn (real time) until it returns a value other than undefined; rejects with the last error after boundMs. */
export async function eventually<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, boundMs = 30_000, everyMs = 500): Promise<T> {
  const end = Date.now() + boundMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
