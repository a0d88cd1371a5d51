/**
 * Client credential plugins (spec 5.8): runs a kubeconfig user's exec command and reads the
 * ExecCredential it prints, as client-go's exec authenticator does. ExecCredentialSource caches
 * the credential until its expirationTimestamp, until the server answers 401 (the caller calls
 * invalidate()), or until the process exits; without an expiry only the last two apply.
 */
import { spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { UnauthorizedError } from '../errors';

export const EXEC_API_VERSIONS = ['client.authentication.svc.io/v1', 'client.authentication.svc.io/v1beta1'] as const;
export type ExecApiVersion = (typeof EXEC_API_VERSIONS)[number];
export type InteractiveMode = 'Never' | 'IfAvailable' | 'Always';

/** The user.exec block of a kubeconfig. */
export interface ExecConfig {
  command: string;
  args?: readonly string[];
  env?: ReadonlyArray<{ name: string; value: string }>;
  apiVersion: string;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: InteractiveMode;
}

/** The cluster the credential is for, passed to the plugin when provideClusterInfo is set (ExecCredential spec.cluster). */
export interface ExecClusterInfo {
  server: string;
  'certificate-authority-data'?: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'proxy-url'?: string;
  'disable-compression'?: boolean;
  /** The cluster's extensions["client.authentication.k8s.io/exec"] value, opaque to us. */
  config?: unknown;
}

/** What the plugin gave: a bearer token, or a client certificate and key (PEM, possibly with intermediates). */
export interface ExecCredentialResult {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** When the credential stops being valid; undefined: until a 401 or process exit. */
  expiry?: Date;
}

export class ExecCredentialError extends UnauthorizedError {
  override readonly name = 'ExecCredentialError';
  override readonly code = 'SVC_NODE_ERR_EXEC_CREDENTIAL';
}

export interface ExecOptions {
  /** Whether standard input is a terminal (interactive plugins may prompt). Default process.stdin.isTTY. */
  stdinIsTTY?: boolean;
  /** Kills the plugin after this long (default none, as client-go). */
  timeoutMs?: number;
  /** Base environment (default process.env). */
  baseEnv?: NodeJS.ProcessEnv;
}

/** Checks an exec block as client-go validates it; throws ExecCredentialError naming the field. */
export function validateExecConfig(e: ExecConfig): void {
  if (!e.command) throw new ExecCredentialError('exec: command: Required value');
  if (!(EXEC_API_VERSIONS as readonly string[]).includes(e.apiVersion)) {
    throw new ExecCredentialError(`exec: apiVersion: Unsupported value: ${JSON.stringify(e.apiVersion)}: supported values: ${EXEC_API_VERSIONS.join(', ')}`);
  }
  if (e.interactiveMode === undefined) {
    if (e.apiVersion === 'client.authentication.svc.io/v1') throw new ExecCredentialError('exec: interactiveMode: Required value: must be set for client.authentication.svc.io/v1');
  } else if (!['Never', 'IfAvailable', 'Always'].includes(e.interactiveMode)) {
    throw new ExecCredentialError(`exec: interactiveMode: Unsupported value: ${JSON.stringify(e.interactiveMode)}: supported values: Never, IfAvailable, Always`);
  }
}

/** The command to run: absolute as given; with a path separator, relative to the kubeconfig's directory; a bare name is looked up on PATH. */
export function resolveCommand(command: string, kubeconfigDir: string): string {
  if (isAbsolute(command) || !command.includes('/')) return command;
  return resolve(kubeconfigDir, command);
}

/**
 * Runs the plugin once and returns its credential. The plugin gets the caller's environment
 * plus exec.env and KUBERNETES_EXEC_INFO (an ExecCredential whose spec says whether it may be
 * interactive and, with provideClusterInfo, the cluster). Rejects with ExecCredentialError on a
 * missing command (with the installHint), a failing exit, or an answer that is not a valid
 * ExecCredential of the configured apiVersion.
 */
export async function execCredential(exec: ExecConfig, kubeconfigDir: string, cluster?: ExecClusterInfo, opts: ExecOptions = {}): Promise<ExecCredentialResult> {
  validateExecConfig(exec);
  const mode: InteractiveMode = exec.interactiveMode ?? 'IfAvailable';
  const tty = opts.stdinIsTTY ?? process.stdin.isTTY === true;
  if (mode === 'Always' && !tty) throw new ExecCredentialError('exec plugin cannot support interactive mode: standard input is not a terminal');
  const interactive = mode !== 'Never' && tty;
  const spec: Record<string, unknown> = { interactive };
  if (exec.provideClusterInfo && cluster) spec.cluster = cluster;
  const info = { apiVersion: exec.apiVersion, kind: 'ExecCredential', spec };
  const env: NodeJS.ProcessEnv = { ...(opts.baseEnv ?? process.env) };
  for (const { name, value } of exec.env ?? []) env[name] = value;
  env.KUBERNETES_EXEC_INFO = JSON.stringify(info);
  const command = resolveCommand(exec.command, kubeconfigDir);

  const { code, stdout, stderr, spawnError } = await new Promise<{ code: number | null; stdout: string; stderr: string; spawnError?: NodeJS.ErrnoException }>((done) => {
    const child = spawn(command, [...(exec.args ?? [])], { env, stdio: [interactive ? 'inherit' : 'ignore', 'pipe', interactive ? 'inherit' : 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.once('error', (e: NodeJS.ErrnoException) => {
      if (timer) clearTimeout(timer);
      done({ code: null, stdout: out, stderr: err, spawnError: e });
    });
    child.once('close', (c) => {
      if (timer) clearTimeout(timer);
      done({ code: c, stdout: out, stderr: err });
    });
  });
  if (spawnError) {
    const hint = exec.installHint ? `\n\n${exec.installHint}` : '';
    throw new ExecCredentialError(`exec: executable ${exec.command} not found${spawnError.code === 'ENOENT' ? '' : ` (${spawnError.message})`}${hint}`);
  }
  if (code !== 0) {
    const tail = stderr.trim().split('\n').slice(-3).join('\n');
    throw new ExecCredentialError(`exec: executable ${exec.command} failed with exit code ${code ?? 'signal'}${tail ? `: ${tail}` : ''}`);
  }
  return parseExecCredential(stdout, exec.apiVersion);
}

/** Parses and checks a plugin's output. */
export function parseExecCredential(stdout: string, apiVersion: string): ExecCredentialResult {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new ExecCredentialError('exec: decoding stdout: the plugin did not print a JSON ExecCredential');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ExecCredentialError('exec: decoding stdout: not an object');
  const d = doc as Record<string, unknown>;
  if (d.kind !== 'ExecCredential') throw new ExecCredentialError(`exec: plugin returned kind ${JSON.stringify(d.kind)}, expected ExecCredential`);
  if (d.apiVersion !== apiVersion) throw new ExecCredentialError(`exec plugin is configured to use API version ${apiVersion}, plugin returned version ${String(d.apiVersion)}`);
  const st = d.status;
  if (typeof st !== 'object' || st === null) throw new ExecCredentialError('exec plugin didn\'t return a status field');
  const s = st as Record<string, unknown>;
  const str = (k: string) => (typeof s[k] === 'string' && s[k] !== '' ? (s[k]) : undefined);
  const token = str('token');
  const cert = str('clientCertificateData');
  const key = str('clientKeyData');
  if ((cert === undefined) !== (key === undefined)) throw new ExecCredentialError('exec plugin returned only one of clientCertificateData and clientKeyData; both are required together');
  if (token === undefined && cert === undefined) throw new ExecCredentialError('exec plugin didn\'t return a token or cert/key pair');
  const out: ExecCredentialResult = {};
  if (token !== undefined) out.token = token;
  if (cert !== undefined && key !== undefined) {
    out.certPem = cert;
    out.keyPem = key;
  }
  const exp = str('expirationTimestamp');
  if (exp !== undefined) {
    const t = Date.parse(exp);
    if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(exp)) throw new ExecCredentialError(`exec plugin returned an invalid expirationTimestamp ${JSON.stringify(exp)}`);
    out.expiry = new Date(t);
  }
  return out;
}

/**
 * A cached credential for one kubeconfig user (5.8). get() runs the plugin when there is no
 * credential or it has expired, sharing one run among concurrent callers; invalidate() drops it
 * after a 401 so the next get() runs the plugin again. A result object is reused while cached, so
 * a new object means new credentials (for certificates: build a new TLS dispatcher, forcing a new
 * handshake).
 */
export class ExecCredentialSource {
  private cached: ExecCredentialResult | undefined;
  private running: Promise<ExecCredentialResult> | undefined;

  constructor(
    private readonly exec: ExecConfig,
    private readonly kubeconfigDir: string,
    private readonly cluster?: ExecClusterInfo,
    private readonly opts: ExecOptions & { now?: () => Date; run?: typeof execCredential } = {},
  ) {
    validateExecConfig(exec);
  }

  /** The current credential, running the plugin when needed; rejects with ExecCredentialError. */
  async get(): Promise<ExecCredentialResult> {
    const now = (this.opts.now ?? (() => new Date()))();
    if (this.cached && (!this.cached.expiry || this.cached.expiry.getTime() > now.getTime())) return this.cached;
    if (!this.running) {
      const run = this.opts.run ?? execCredential;
      this.running = run(this.exec, this.kubeconfigDir, this.cluster, this.opts).then(
        (r) => {
          this.cached = r;
          this.running = undefined;
          return r;
        },
        (err: unknown) => {
          this.running = undefined;
          throw err;
        },
      );
    }
    return this.running;
  }

  /** Forgets the credential (call on a 401 from the server); the next get() runs the plugin. */
  invalidate(stale?: ExecCredentialResult): void {
    // A 401 for an older credential must not drop a newer one another request already fetched.
    if (stale === undefined || stale === this.cached) this.cached = undefined;
  }
}
