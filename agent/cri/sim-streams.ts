/**
 * The simulator's streaming RPCs (Exec, Attach, PortForward). A real runtime answers a URL on its
 * stream server; the simulator answers `sim://streams/<token>` and serves the stream in-process
 * when the agent asks for the token's target (RuntimeService.localStream). Tokens are single use
 * and expire after a minute, as the CRI stream server's request cache. Exec runs the built-in
 * command set of ./sim-shell.ts; attach reaches the container's main process when it reads stdin
 * (an interactive sh, cat; see attachMain for stdinOnce), else a `cat` (stdin echoed to stdout
 * until the client closes stdin); port-forward connects to an echo server on every port (what is written
 * comes back). `open` counts the streams running, for tests that check none is left behind.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions } from './runtime-service';
import type { LocalStreamTarget, StreamAttachRequest, StreamExecRequest, StreamPortForwardRequest } from './stream-types';
import { isSimCommand, runSimExec, type SimShellContext } from './sim-shell';
import type { SimState } from './sim-state';
import type { ContainerRec } from './sim-records';
import type { ExecStreams } from '../../common/stream/exec-streams';
import type { ExitResult } from '../../common/stream/remotecommand';

export const SIM_STREAM_PREFIX = 'sim://streams/';

/** Whether a main process (command and args) reads its stdin until it ends: an interactive sh/bash, or cat of stdin. */
function readsStdin(argv: readonly string[]): boolean {
  const [bin = '', ...args] = argv;
  const base = bin.split('/').pop();
  if (base === 'sh' || base === 'bash') return !args.includes('-c');
  if (base === 'cat') return args.length === 0 || (args.length === 1 && args[0] === '-');
  return false;
}
const TOKEN_TTL_MS = 60_000;

export class SimStreams {
  private readonly tokens = new Map<string, { target: LocalStreamTarget; expires: number }>();
  /** Streams running now (exec and attach sessions, forwarded connections). */
  open = 0;
  /** Files execs wrote into each container (tar x of kubectl cp), by container ID. */
  private readonly written = new Map<string, Map<string, Buffer>>();

  constructor(
    private readonly state: SimState,
    private readonly clock: Clock,
    private readonly begin: (rpc: string, opts?: CallOptions) => Promise<void>,
  ) {}

  async exec(r: StreamExecRequest, opts?: CallOptions): Promise<string> {
    await this.begin('Exec', opts);
    const c = this.running(r.containerId, 'Exec');
    if (r.cmd.length === 0) throw new RuntimeError('InvalidArgument', 'cmd must not be empty', 'Exec');
    return this.issue({ kind: 'exec', cmd: [...r.cmd], run: (s) => this.counted(() => this.runExec(c, r.cmd, s)) });
  }

  async attach(r: StreamAttachRequest, opts?: CallOptions): Promise<string> {
    await this.begin('Attach', opts);
    const c = this.running(r.containerId, 'Attach');
    const main = [...(c.config.command ?? []), ...(c.config.args ?? [])];
    if (r.stdin && c.config.stdin && readsStdin(main)) return this.issue({ kind: 'exec', cmd: [], run: (s) => this.counted(() => this.attachMain(c, main, s)) });
    return this.issue({ kind: 'exec', cmd: [], run: (s) => this.counted(() => this.runExec(c, ['cat'], s)) });
  }

  /**
   * An attach with stdin to a container whose main process reads it (created with stdin; sh or bash
   * without -c, or cat without files): the attach's streams are that process's. The container
   * exits with the process's code when it ends by itself (an `exit` typed into the shell), or when
   * the attach's stdin ends (the client closed it or went away) and the container has stdinOnce:
   * upstream's runtimes then close the container's stdin after that first attach (containerd's
   * CRI attach, as the kubelet asks), so a shell reads EOF and exits; this is what lets
   * `kubectl run -it --rm` see its pod complete and delete it. Without stdinOnce the container's
   * stdin stays open and it keeps running (the next attach here starts a fresh shell: a
   * simplification). The attach itself ends with success, as a runtime's attach carries no exit
   * status: the code is the container's (kubectl run reads it from the pod's status).
   */
  private async attachMain(c: ContainerRec, argv: readonly string[], s: ExecStreams): Promise<ExitResult> {
    let stdinEnded = false;
    s.stdin?.once('end', () => (stdinEnded = true));
    let code = 0;
    try {
      const r = await this.runExec(c, argv, s);
      if ('exitCode' in r) code = r.exitCode;
    } catch {
      // The client's stdin failed as it went away: the shell saw the end of its input.
      stdinEnded = true;
    }
    const byItself = !stdinEnded && !s.signal.aborted;
    this.state.settle();
    if (c.state === 'CONTAINER_RUNNING' && this.state.containers.get(c.id) === c && (byItself || c.config.stdinOnce === true)) this.state.exit(c, this.clock.now(), code);
    return { exitCode: 0 };
  }

  async portForward(r: StreamPortForwardRequest, opts?: CallOptions): Promise<string> {
    await this.begin('PortForward', opts);
    const sb = this.state.sandboxes.get(r.podSandboxId);
    if (!sb) throw new RuntimeError('NotFound', `an error occurred when try to find sandbox "${r.podSandboxId}": not found`, 'PortForward');
    return this.issue({
      kind: 'portforward',
      dial: (_port, signal) => {
        // What the pod receives it sends back: both count on the sandbox's eth0 (ListPodSandboxStats).
        const echo = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            sb.rxBytes = (sb.rxBytes ?? 0) + chunk.length;
            sb.txBytes = (sb.txBytes ?? 0) + chunk.length;
            cb(null, chunk);
          },
        });
        this.open++;
        let counted = true;
        const release = (): void => {
          if (counted) this.open--;
          counted = false;
        };
        echo.once('close', release);
        signal.addEventListener('abort', () => echo.destroy(), { once: true });
        return Promise.resolve(echo);
      },
    });
  }

  /** The target behind a URL this simulator answered (consumed), or undefined. */
  take(url: string): LocalStreamTarget | undefined {
    if (!url.startsWith(SIM_STREAM_PREFIX)) return undefined;
    const now = this.clock.now();
    for (const [k, v] of this.tokens) if (v.expires <= now) this.tokens.delete(k);
    const token = url.slice(SIM_STREAM_PREFIX.length);
    const t = this.tokens.get(token);
    this.tokens.delete(token);
    return t?.target;
  }

  private issue(target: LocalStreamTarget): string {
    const token = randomBytes(12).toString('base64url');
    this.tokens.set(token, { target, expires: this.clock.now() + TOKEN_TTL_MS });
    return SIM_STREAM_PREFIX + token;
  }

  private running(containerId: string, rpc: string): ContainerRec {
    const c = this.state.mustContainer(containerId, rpc);
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', `container ${c.id} is not running (state ${c.state})`, rpc);
    return c;
  }

  private async counted(run: () => Promise<ExitResult>): Promise<ExitResult> {
    this.open++;
    try {
      return await run();
    } finally {
      this.open--;
    }
  }

  private async runExec(c: ContainerRec, cmd: readonly string[], s: ExecStreams): Promise<ExitResult> {
    if (!isSimCommand(cmd[0] ?? '')) {
      return { error: `failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: "${cmd[0] ?? ''}": executable file not found in $PATH: unknown` };
    }
    const pod = this.state.sandboxes.get(c.sandboxId)?.config;
    const env: Record<string, string> = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOSTNAME: pod?.hostname || pod?.metadata.name || '' };
    for (const kv of c.config.envs ?? []) env[kv.key] = kv.value;
    if (s.tty) env.TERM = 'xterm';
    let size: { width: number; height: number } | undefined;
    s.onResize((r) => (size = r));
    const ctx: SimShellContext = {
      ...(s.stdin ? { stdin: s.stdin } : {}),
      ...(s.stdout ? { stdout: s.stdout } : {}),
      ...(s.stderr ? { stderr: s.stderr } : {}),
      env,
      readFile: (p) => this.readFile(c, env.HOSTNAME ?? '', p),
      sleep: (ms) => this.clock.sleep(ms, s.signal),
      signal: s.signal,
      terminalSize: () => size,
      written: this.filesOf(c.id),
      now: () => this.clock.now(),
      tty: s.tty,
    };
    return { exitCode: await runSimExec(cmd, ctx) };
  }

  private filesOf(containerId: string): Map<string, Buffer> {
    const known = this.written.get(containerId);
    if (known) return known;
    const m = new Map<string, Buffer>();
    this.written.set(containerId, m);
    return m;
  }

  /** A file as the container sees it: through its mounts (the longest container path wins), or /etc/hostname. */
  private async readFile(c: ContainerRec, hostname: string, p: string): Promise<Buffer> {
    const abs = path.posix.resolve('/', p);
    const mounts = [...(c.config.mounts ?? [])].filter((m) => m.hostPath !== '').sort((a, b) => b.containerPath.length - a.containerPath.length);
    for (const m of mounts) {
      const base = m.containerPath.replace(/\/+$/, '');
      if (abs === base || abs.startsWith(base + '/')) return readFile(path.join(m.hostPath, abs.slice(base.length)));
    }
    if (abs === '/etc/hostname') return Buffer.from(`${hostname}\n`);
    throw new Error(`${p}: no such file`);
  }
}
