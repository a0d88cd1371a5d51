/**
 * Periodic cleanup, as upstream's HandlePodCleanups and container GC: sandboxes and containers
 * svc-node created for pods it no longer knows (deleted while the agent was down, or left by a
 * crash mid-cleanup) are stopped and removed with the pod's volumes and cgroup; pod directories,
 * pod log directories and pod cgroups without a pod go too (upstream evictPodLogsDirectories);
 * dead containers and sandboxes of live pods are collected (./container-gc), each container's
 * log files with it (upstream removeContainerLog: the runtime leaves them on disk). Orphans are only judged once every pod source has delivered its first full
 * set, so a restarting agent never removes pods it has not heard about yet. Only objects carrying
 * svc-node's label are touched.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { RuntimeService } from '../cri';
import { removeContainerLogs } from '../logs/remove-container-logs';
import type { Log } from '../platform/logger';
import { planContainerGc } from './container-gc';
import type { PodCgroups } from './pod-cgroups';
import type { PodSyncer } from './pod-sync';
import { podUidOfLogDirectory } from './sandbox-config';
import { MANAGED_BY, MANAGER, POD_UID } from './runtime-labels';
import type { VolumeManager } from './volumes';

export interface HousekeepingOptions {
  runtime: RuntimeService;
  syncer: PodSyncer;
  volumes: VolumeManager;
  cgroups: PodCgroups;
  /** podLogsDir of the configuration: <namespace>_<name>_<uid> directories live there. */
  podLogsDir: string;
  log: Log;
  /** UIDs of every pod the agent runs or is terminating. */
  knownUids: () => ReadonlySet<string>;
  /** True once every source delivered its first full set. */
  sourcesReady: () => boolean;
  callTimeoutMs: number;
}

export interface HousekeepingReport {
  orphanPods: string[];
  removedContainers: number;
  removedSandboxes: number;
  removedDirs: string[];
  removedLogDirs: string[];
  removedCgroups: string[];
}

export class Housekeeping {
  constructor(private readonly o: HousekeepingOptions) {}

  /** One round. Rejects RuntimeError when the runtime cannot be listed (the caller tries again next round). */
  async runOnce(signal?: AbortSignal): Promise<HousekeepingReport> {
    const report: HousekeepingReport = { orphanPods: [], removedContainers: 0, removedSandboxes: 0, removedDirs: [], removedLogDirs: [], removedCgroups: [] };
    const call = { timeoutMs: this.o.callTimeoutMs, ...(signal ? { signal } : {}) };
    const selector = { [MANAGED_BY]: MANAGER };
    const [sandboxes, containers] = await Promise.all([
      this.o.runtime.listPodSandbox({ labelSelector: selector }, call),
      this.o.runtime.listContainers({ labelSelector: selector }, call),
    ]);
    const known = this.o.knownUids();
    const inRuntime = new Set<string>();
    for (const x of [...sandboxes, ...containers]) {
      const uid = x.labels[POD_UID];
      if (uid) inRuntime.add(uid);
    }

    if (this.o.sourcesReady()) {
      for (const uid of inRuntime) {
        if (known.has(uid)) continue;
        this.o.log.info({ pod: uid }, 'removing runtime objects of a pod the agent no longer knows');
        try {
          await this.o.syncer.cleanup(uid, signal);
          report.orphanPods.push(uid);
        } catch (e) {
          this.o.log.warn({ pod: uid, error: (e as Error).message }, 'cannot clean up orphaned pod yet');
        }
      }
      for (const uid of await this.o.volumes.podUids()) {
        if (known.has(uid) || inRuntime.has(uid)) continue;
        await this.o.volumes.tearDown(uid);
        report.removedDirs.push(uid);
      }
      for (const name of await this.podLogDirs()) {
        const uid = podUidOfLogDirectory(name)!;
        if (known.has(uid) || inRuntime.has(uid)) continue;
        await rm(path.join(this.o.podLogsDir, name), { recursive: true, force: true });
        report.removedLogDirs.push(uid);
      }
      for (const uid of await this.o.cgroups.podUids()) {
        if (known.has(uid) || inRuntime.has(uid)) continue;
        const left = await this.o.cgroups.remove(uid);
        if (left.length === 0) report.removedCgroups.push(uid);
      }
    }

    const plan = planContainerGc(containers, sandboxes, known);
    for (const id of plan.containers) {
      try {
        const { logPath } = (await this.o.runtime.containerStatus(id, false, call)).status;
        await removeContainerLogs(logPath);
        await this.o.runtime.removeContainer(id, call);
        report.removedContainers++;
      } catch (e) {
        this.o.log.warn({ containerId: id, error: (e as Error).message }, 'cannot remove dead container');
      }
    }
    for (const id of plan.sandboxes) {
      try {
        await this.o.runtime.removePodSandbox(id, call);
        report.removedSandboxes++;
      } catch (e) {
        this.o.log.warn({ sandboxId: id, error: (e as Error).message }, 'cannot remove dead sandbox');
      }
    }
    return report;
  }

  /** Names of the pod log directories (absent podLogsDir: none). */
  private async podLogDirs(): Promise<string[]> {
    try {
      const entries = await readdir(this.o.podLogsDir, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && podUidOfLogDirectory(e.name) !== undefined).map((e) => e.name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }
}
