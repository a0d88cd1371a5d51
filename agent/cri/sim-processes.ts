/**
 * What a simulated container's processes do: the log file (created before the start, reopened
 * after rotation), ExecSync played from canned results on the clock, container and sandbox stats, and checkpoint
 * archives written to disk. The records stay SimState's and the gate the Simulator's; these are
 * the RPCs that act inside one container, which the Simulator delegates here.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions } from './runtime-service';
import { checkpointArchive } from './sim-checkpoint';
import { resolveExec } from './sim-exec';
import type { SimulatorOptions } from './sim-options';
import { labelsMatch, sandboxStatsOf, statsOf, type ContainerRec } from './sim-records';
import type { SimState } from './sim-state';
import type { ContainerStats, ContainerStatsFilter, ExecSyncResult, PodSandboxStats, PodSandboxStatsFilter } from './types';

export class SimProcesses {
  constructor(
    private readonly state: SimState,
    private readonly clock: Clock,
    private readonly opts: SimulatorOptions,
    private readonly root: string,
    /** The Simulator's RPC entry: the gate, then catching up with the clock. */
    private readonly begin: (rpc: string, opts?: CallOptions) => Promise<void>,
  ) {}

  async reopenContainerLog(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('ReopenContainerLog', opts);
    const c = this.state.mustContainer(containerId, 'ReopenContainerLog');
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', 'container is not running', 'ReopenContainerLog');
    // As containerd: the log path is opened afresh (created if rotation renamed it away).
    if (this.opts.writeLogs !== false && c.logPath) {
      try {
        await appendFile(c.logPath, '');
      } catch (e) {
        throw new RuntimeError('Unknown', `failed to reopen container log ${c.logPath}: ${(e as Error).message}`, 'ReopenContainerLog');
      }
    }
  }

  async execSync(containerId: string, cmd: string[], timeoutSeconds: number, opts?: CallOptions): Promise<ExecSyncResult> {
    await this.begin('ExecSync', opts);
    const c = this.state.mustContainer(containerId, 'ExecSync');
    if (c.state !== 'CONTAINER_RUNNING') {
      throw new RuntimeError('FailedPrecondition', `container ${c.id} is not running (state ${c.state})`, 'ExecSync');
    }
    const pod = this.state.sandboxes.get(c.sandboxId)?.config.metadata;
    const result = resolveExec(
      {
        containerId: c.id,
        containerName: c.config.metadata.name,
        podName: pod?.name ?? '',
        podNamespace: pod?.namespace ?? '',
        image: c.image.repoTags[0] ?? c.image.id,
        cmd: [...cmd],
      },
      c.behaviour.exec,
      this.opts.exec,
    );
    if (result.error !== undefined) throw new RuntimeError('Unknown', result.error, 'ExecSync');
    const duration = result.durationMs ?? 0;
    const limit = timeoutSeconds > 0 ? timeoutSeconds * 1000 : Infinity;
    if (duration > 0 && !(await this.clock.sleep(Math.min(duration, limit), opts?.signal))) {
      throw new RuntimeError('Canceled', 'exec canceled', 'ExecSync');
    }
    if (duration > limit) {
      throw new RuntimeError('DeadlineExceeded', `timeout ${timeoutSeconds}s exceeded: context deadline exceeded`, 'ExecSync');
    }
    return { stdout: toBuffer(result.stdout), stderr: toBuffer(result.stderr), exitCode: result.exitCode ?? 0 };
  }

  async containerStats(containerId: string, opts?: CallOptions): Promise<ContainerStats> {
    await this.begin('ContainerStats', opts);
    return statsOf(this.state.mustContainer(containerId, 'ContainerStats'), this.clock.now(), this.root);
  }

  async listContainerStats(filter?: ContainerStatsFilter, opts?: CallOptions): Promise<ContainerStats[]> {
    await this.begin('ListContainerStats', opts);
    const out: ContainerStats[] = [];
    for (const c of this.state.containers.values()) {
      if (filter?.id && !c.id.startsWith(filter.id)) continue;
      if (filter?.podSandboxId && !c.sandboxId.startsWith(filter.podSandboxId)) continue;
      if (!labelsMatch(c.config.labels, filter?.labelSelector)) continue;
      // containerd lists stats of running containers only.
      if (c.state === 'CONTAINER_RUNNING') out.push(statsOf(c, this.clock.now(), this.root));
    }
    return out;
  }

  async listPodSandboxStats(filter?: PodSandboxStatsFilter, opts?: CallOptions): Promise<PodSandboxStats[]> {
    await this.begin('ListPodSandboxStats', opts);
    if (this.opts.podSandboxStats === false) throw new RuntimeError('Unimplemented', 'method ListPodSandboxStats not implemented', 'ListPodSandboxStats');
    const now = this.clock.now();
    const out: PodSandboxStats[] = [];
    for (const s of this.state.sandboxes.values()) {
      if (s.state !== 'SANDBOX_READY') continue;
      if (filter?.id && !s.id.startsWith(filter.id)) continue;
      if (!labelsMatch(s.config.labels, filter?.labelSelector)) continue;
      const containers = [...this.state.containers.values()].filter((c) => c.sandboxId === s.id && c.state === 'CONTAINER_RUNNING').map((c) => statsOf(c, now, this.root));
      out.push(sandboxStatsOf(s, containers, now));
    }
    return out;
  }

  async checkpointContainer(containerId: string, location: string, _timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.begin('CheckpointContainer', opts);
    if (this.opts.checkpoint === false) {
      throw new RuntimeError('Unimplemented', 'method CheckpointContainer not implemented', 'CheckpointContainer');
    }
    const c = this.state.mustContainer(containerId, 'CheckpointContainer');
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', `container ${c.id} is not running`, 'CheckpointContainer');
    if (!path.isAbsolute(location)) {
      throw new RuntimeError('InvalidArgument', `checkpoint location ${JSON.stringify(location)} must be an absolute path`, 'CheckpointContainer');
    }
    let archive: Buffer;
    try {
      archive = checkpointArchive(c, this.state.sandboxes.get(c.sandboxId), this.clock.now(), this.opts.runtimeName ?? 'svc-sim');
    } catch (e) {
      throw new RuntimeError('InvalidArgument', (e as Error).message, 'CheckpointContainer');
    }
    try {
      await writeFile(location, archive, { mode: 0o600 });
    } catch (e) {
      throw new RuntimeError('Unknown', `failed to write checkpoint archive ${location}: ${(e as Error).message}`, 'CheckpointContainer');
    }
  }

  /** Creates the container's log file with its behaviour's lines, as CRI log lines stamped now. */
  async writeLog(c: ContainerRec): Promise<void> {
    const ts = new Date(this.clock.now()).toISOString().replace('Z', '000000Z');
    await mkdir(path.dirname(c.logPath), { recursive: true });
    await appendFile(c.logPath, (c.behaviour.logLines ?? []).map((l) => `${ts} stdout F ${l}\n`).join(''));
  }
}

function toBuffer(v: string | Buffer | undefined): Buffer {
  if (v === undefined) return Buffer.alloc(0);
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}
