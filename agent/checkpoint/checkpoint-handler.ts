/**
 * POST /checkpoint/{namespace}/{pod}/{container}[?timeout=N] (spec 4.11, upstream's kubelet
 * checkpoint handler): asks the runtime to checkpoint the container into
 * <root-dir>/checkpoints/checkpoint-<pod>_<namespace>-<container>-<RFC3339>.tar and answers
 * 200 {"items": [path]}. 404 when the ContainerCheckpoint gate is off or the container is unknown;
 * 400 for bad names or timeouts; 409 while the same container is being checkpointed; 500 with the
 * runtime's message when it fails or lacks the call, or when the archive it wrote is not a readable
 * tar (the archive is then removed). The directory is 0700 and the archive 0600 because the archive
 * holds process memory.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../apiserver/api/errors';
import type { RuntimeService } from '../cri';
import type { CheckpointObserver } from '../metrics/agent-metrics';
import type { Log } from '../platform/logger';
import { replyError, replyJson } from '../server/status-reply';
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

function fail(code: number, message: string): ApiError {
  const reason = code === 400 ? 'BadRequest' : code === 404 ? 'NotFound' : code === 405 ? 'MethodNotAllowed' : code === 409 ? 'Conflict' : 'InternalError';
  return new ApiError(reason, message, undefined, code);
}

/** Checkpoints containers; one request per container at a time. */
export class CheckpointHandler implements InFlightArchives {
  private readonly busy = new Set<string>();
  private readonly writing = new Set<string>();

  constructor(private readonly o: CheckpointHandlerOptions) {}

  /** Serves one request; answers every outcome itself. Never rejects. */
  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!this.o.enabled()) {
      // Upstream does not register the route at all without the gate.
      replyError(res, fail(404, 'the server could not find the requested resource (checkpointing is disabled: feature gate ContainerCheckpoint is off)'));
      return;
    }
    if (req.method !== 'POST') {
      replyError(res, fail(405, `method ${req.method ?? ''} not allowed; use POST`));
      return;
    }
    let r: CheckpointRequest;
    try {
      const url = new URL(req.url ?? '/', 'https://node.invalid');
      r = parseCheckpointRequest(url.pathname, url.searchParams);
    } catch (e) {
      if (e instanceof CheckpointRequestError) replyError(res, fail(e.code, e.message));
      else replyError(res, fail(400, 'malformed request URL'));
      return;
    }
    const key = `${r.namespace}/${r.pod}/${r.container}`;
    if (this.busy.has(key)) {
      replyError(res, fail(409, `a checkpoint of container ${r.container} in pod ${r.namespace}/${r.pod} is already in progress`));
      return;
    }
    this.busy.add(key);
    try {
      const result = await this.checkpoint(r);
      replyJson(res, 200, result);
    } catch (e) {
      if (e instanceof ApiError) replyError(res, e);
      else replyError(res, fail(500, (e as Error).message));
    } finally {
      this.busy.delete(key);
    }
  };

  /** Paths of the archives being written or verified now (shared with the retention policy). */
  inFlight(): ReadonlySet<string> {
    return this.writing;
  }

  /** Runs one checkpoint; rejects ApiError 404/500. */
  async checkpoint(r: CheckpointRequest): Promise<CheckpointResult> {
    let id: string;
    try {
      id = await this.o.locator.containerId(r.namespace, r.pod, r.container);
    } catch (e) {
      if ((e as { code?: unknown }).code === 404) throw fail(404, (e as Error).message);
      throw e;
    }
    const dir = checkpointsDir(this.o.rootDir);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir leaves an existing directory's mode alone; the archives hold memory pages.
    await chmod(dir, 0o700);
    const file = archivePath(this.o.rootDir, r, this.o.now());
    const started = this.o.now();
    this.writing.add(file);
    try {
      await this.writeArchive(id, r, file, started);
      this.o.observer?.checkpoint('success', (this.o.now() - started) / 1000);
    } catch (e) {
      this.o.observer?.checkpoint('failure', (this.o.now() - started) / 1000);
      throw e;
    } finally {
      this.writing.delete(file);
    }
    return { items: [file] };
  }

  /** The runtime call and the archive check; a failed or unreadable archive is removed. Rejects ApiError 500. */
  private async writeArchive(id: string, r: CheckpointRequest, file: string, started: number): Promise<void> {
    const callTimeoutMs = r.timeoutSeconds > 0 ? r.timeoutSeconds * 1000 + (this.o.callSlackMs ?? 10_000) : undefined;
    try {
      await this.o.runtime.checkpointContainer(id, file, r.timeoutSeconds, callTimeoutMs !== undefined ? { timeoutMs: callTimeoutMs } : {});
    } catch (e) {
      await rm(file, { force: true });
      this.o.log.warn({ container: id, pod: `${r.namespace}/${r.pod}`, error: (e as Error).message }, 'checkpoint failed');
      throw fail(500, (e as Error).message);
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
      throw fail(500, msg);
    }
  }
}
