/**
 * Rotates the log files of running containers, as upstream's kubelet container log manager does:
 * with containerd and CRI-O the kubelet, not the runtime, keeps container logs in bounds. Every
 * intervalMs the runtime's containers are listed; for each running one whose live log (its
 * ContainerStatus logPath) has reached maxSizeBytes, the log is rotated (rotate-log.ts) so that at
 * most maxFiles files remain, and the runtime is asked to reopen it. A container whose status or
 * rotation fails is logged (id and path, never the log's contents) and the pass goes on.
 */
import { stat } from 'node:fs/promises';
import type { CallOptions, RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { rotateLog } from './rotate-log';

export interface ContainerLogManagerOptions {
  runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus' | 'reopenContainerLog'>;
  clock: Clock;
  log: Log;
  /** A live log at least this big (bytes) is rotated. */
  maxSizeBytes: number;
  /** Files kept per container, the live one included (at least 2). */
  maxFiles: number;
  /** Time between the end of one pass and the start of the next. */
  intervalMs: number;
  /** Deadline of each runtime call (default: the runtime service's own). */
  callTimeoutMs?: number;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The file's size, or undefined when it does not exist. */
async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export class ContainerLogManager {
  constructor(private readonly o: ContainerLogManagerOptions) {}

  /** Runs a pass now and then every intervalMs until signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    this.o.log.info({ maxSizeBytes: this.o.maxSizeBytes, maxFiles: this.o.maxFiles, intervalMs: this.o.intervalMs }, 'container log rotation started');
    while (!signal.aborted) {
      await this.runOnce(signal);
      if (!(await this.o.clock.sleep(this.o.intervalMs, signal))) return;
    }
  }

  /** One pass over the running containers. Never rejects; failures are logged. */
  async runOnce(signal?: AbortSignal): Promise<void> {
    const call: CallOptions = { ...(this.o.callTimeoutMs !== undefined ? { timeoutMs: this.o.callTimeoutMs } : {}), ...(signal ? { signal } : {}) };
    let containers;
    try {
      containers = await this.o.runtime.listContainers(undefined, call);
    } catch (e) {
      if (!signal?.aborted) this.o.log.error({ error: message(e) }, 'cannot list containers for log rotation');
      return;
    }
    for (const c of containers) {
      if (signal?.aborted) return;
      // Only running containers write; a stopped one would be left with an empty live file.
      if (c.state !== 'CONTAINER_RUNNING') continue;
      await this.checkContainer(c.id, call);
    }
  }

  private async checkContainer(containerId: string, call: CallOptions): Promise<void> {
    let path = '';
    try {
      path = (await this.o.runtime.containerStatus(containerId, false, call)).status.logPath;
      if (path === '') return; // the runtime keeps no log file for it
      let size = await sizeOf(path);
      if (size === undefined) {
        // Removed from under the runtime (or a rotation whose reopen never happened): ask for a new one.
        await this.o.runtime.reopenContainerLog(containerId, call);
        size = await sizeOf(path);
        if (size === undefined) throw new Error('the log file does not exist even after the runtime reopened it');
      }
      if (size < this.o.maxSizeBytes) return;
      const outcome = await rotateLog(path, this.o.maxFiles, {
        now: () => this.o.clock.now(),
        reopen: () => this.o.runtime.reopenContainerLog(containerId, call),
      });
      switch (outcome.kind) {
        case 'rotated':
          this.o.log.debug({ containerId, path, size, rotated: outcome.rotated, removed: outcome.removed.length, compressed: outcome.compressed.length }, 'rotated container log');
          return;
        case 'name-taken':
          this.o.log.debug({ containerId, path, rotated: outcome.rotated }, 'a rotated log of this second exists already; rotating next pass');
          return;
        case 'reopen-failed':
          if (outcome.restoreError === undefined) {
            this.o.log.warn({ containerId, path, error: message(outcome.error) }, 'the runtime did not reopen the container log; rotation undone, retrying next pass');
          } else {
            // The container's output now goes to the rotated name until a later reopen succeeds.
            this.o.log.error({ containerId, path, rotated: outcome.rotated, error: message(outcome.error), restoreError: message(outcome.restoreError) }, 'the runtime did not reopen the container log and the rotated file could not be renamed back');
          }
          return;
      }
    } catch (e) {
      if (call.signal?.aborted) return;
      this.o.log.error({ containerId, path, error: message(e) }, 'container log rotation failed');
    }
  }
}
