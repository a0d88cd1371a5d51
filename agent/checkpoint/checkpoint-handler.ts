/**
 * POST /checkpoint/{namespace}/{pod}/{container}[?timeout=N] (spec 4.11, upstream's kubelet
 * checkpoint handler): asks the runtime to checkpoint the container into
 * <root-dir>/checkpoints/checkpoint-<pod>_<namespace>-<container>-<RFC3339>.tar and answers
 * 200 {"items": [path]}. 404 when the ContainerCheckpoint gate is off or the container is unknown;
 * 400 for bad names or timeouts; 409 while the same container is being checkpointed; 500 with the
 * runtime's message when it fails or lacks the call, or when the archive it wrote is not a readable
 * tar (the archive is then removed). The directory is 0700 and the archive 0600 because the archive
 * holds process memory. Failures are thrown (agent/errors.ts) for the server's edge to answer.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { RuntimeService } from '../cri';
import { ConflictError, InternalError, InvalidArgumentError, MethodNotAllowedError, NotFoundError } from '../errors';
import type { CheckpointObserver } from '../metrics/agent-metrics';
import type { Log } from '../platform/logger';
import { archivePath, checkpointsDir } from './archive-path';
import { CheckpointRequestError, parseCheckpointRequest, type CheckpointRequest } from './checkpoint-request';
import type { ContainerLocator } from './container-locator';
import { verifyTarArchive } from './verify-archive';

export interface CheckpointHandlerOptions {
  /** Whether the ContainerCheckpoint feature gate is on (read per request). */
  enabled: () => boolean;
  locator: ContainerLocator;
  runtime: Pick<RuntimeService, 'checkpointContainer'>;
  rootDir: string;
  now: () => number;
  log: Log;
  /** Extra time the CRI call may take beyond the requested timeout (default 10 s). */
  callSlackMs?: number;
  /** Told each checkpoint's outcome and duration (metrics); optional. */
  observer?: Pick<CheckpointObserver, 'checkpoint'>;
  /** Told each archive written and verified (the checkpoint event); must not throw. */
  onCheckpointed?: (r: CheckpointRequest, file: string) => void;
}

/** Which archive files are still being written; the retention policy never removes those. */
export interface InFlightArchives {
  /** Absolute paths of archives a checkpoint is writing or verifying right now. */
  inFlight(): ReadonlySet<string>;
}

/** The response body of a successful checkpoint. */
export interface CheckpointResult {
  items: string[];
}

/** A failure of the checkpoint itself: a 500 with its own message (the runtime's, as upstream answers it). */
function failed(e: unknown): InternalError {
  return e instanceof InternalError ? e : new InternalError((e as Error).message, { cause: e });
}

/** Checkpoints containers; one request per container at a time. */
export class CheckpointHandler implements InFlightArchives {
  private readonly busy = new Set<string>();
  private readonly writing = new Set<string>();

  constructor(private readonly o: CheckpointHandlerOptions) {}

  /**
   * Serves one request: resolves the body of the 200 answer, or rejects an AgentError (404 gate off
   * or unknown container, 405, 400 bad request, 409 busy, 500 failed checkpoint).
   */
  readonly handle = async (req: IncomingMessage): Promise<CheckpointResult> => {
    // Upstream does not register the route at all without the gate.
    if (!this.o.enabled()) throw new NotFoundError('the server could not find the requested resource (checkpointing is disabled: feature gate ContainerCheckpoint is off)');
    if (req.method !== 'POST') throw new MethodNotAllowedError(`method ${req.method ?? ''} not allowed; use POST`);
    let r: CheckpointRequest;
    try {
      const url = new URL(req.url ?? '/', 'https://node.invalid');
      r = parseCheckpointRequest(url.pathname, url.searchParams);
    } catch (e) {
      if (e instanceof CheckpointRequestError) throw e;
      throw new InvalidArgumentError('malformed request URL');
    }
    const key = `${r.namespace}/${r.pod}/${r.container}`;
    if (this.busy.has(key)) throw new ConflictError(`a checkpoint of container ${r.container} in pod ${r.namespace}/${r.pod} is already in progress`);
    this.busy.add(key);
    try {
      return await this.checkpoint(r);
    } finally {
      this.busy.delete(key);
    }
  };

  /** Paths of the archives being written or verified now (shared with the retention policy). */
  inFlight(): ReadonlySet<string> {
    return this.writing;
  }

  /** Runs one checkpoint; rejects NotFoundError (unknown container) or InternalError. */
  async checkpoint(r: CheckpointRequest): Promise<CheckpointResult> {
    let id: string;
    try {
      id = await this.o.locator.containerId(r.namespace, r.pod, r.container);
    } catch (e) {
      if (e instanceof NotFoundError) throw e;
      throw failed(e);
    }
    const dir = checkpointsDir(this.o.rootDir);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // mkdir leaves an existing directory's mode alone; the archives hold memory pages.
      await chmod(dir, 0o700);
    } catch (e) {
      throw failed(e);
    }
    const file = archivePath(this.o.rootDir, r, this.o.now());
    const started = this.o.now();
    this.writing.add(file);
    try {
      await this.writeArchive(id, r, file, started);
      this.o.observer?.checkpoint('success', (this.o.now() - started) / 1000);
      this.o.onCheckpointed?.(r, file);
    } catch (e) {
      this.o.observer?.checkpoint('failure', (this.o.now() - started) / 1000);
      throw e;
    } finally {
      this.writing.delete(file);
    }
    return { items: [file] };
  }

  /** The runtime call and the archive check; a failed or unreadable archive is removed. Rejects InternalError. */
  private async writeArchive(id: string, r: CheckpointRequest, file: string, started: number): Promise<void> {
    const callTimeoutMs = r.timeoutSeconds > 0 ? r.timeoutSeconds * 1000 + (this.o.callSlackMs ?? 10_000) : undefined;
    try {
      await this.o.runtime.checkpointContainer(id, file, r.timeoutSeconds, callTimeoutMs !== undefined ? { timeoutMs: callTimeoutMs } : {});
    } catch (e) {
      await rm(file, { force: true });
      this.o.log.warn({ container: id, pod: `${r.namespace}/${r.pod}`, error: (e as Error).message }, 'checkpoint failed');
      throw new InternalError((e as Error).message, { cause: e });
    }
    try {
      await chmod(file, 0o600);
      const entries = await verifyTarArchive(file);
      this.o.log.info({ container: id, pod: `${r.namespace}/${r.pod}`, archive: file, entries, ms: this.o.now() - started }, 'checkpointed container');
    } catch (e) {
      await rm(file, { force: true });
      const code = (e as NodeJS.ErrnoException).code;
      const msg = code === 'ENOENT' ? `the container runtime reported success but wrote no archive at ${file}` : (e as Error).message;
      this.o.log.warn({ container: id, archive: file, error: msg }, 'checkpoint archive refused');
      throw new InternalError(msg, { cause: e });
    }
  }
}
