/**
 * The pod manager's tickers (upstream: the kubelet's housekeeping ticker in syncLoop, every 2 s
 * there, and the container/image GC goroutines): pod housekeeping every 10 s (then the devices of
 * pods that are gone are freed), image garbage collection every 5 min, and the Node object read
 * again for admission every 10 s. Each loop waits one period before its first round; a failing
 * round is logged and the loop goes on. Built once the runtime answers (housekeeping needs the pod
 * syncer).
 */
import type { RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { Housekeeping } from './housekeeping';
import { ImageGc, type DiskUsage } from './image-gc';
import type { PodCgroups } from './pod-cgroups';
import type { PodSyncer } from './pod-sync';
import type { PullRecords } from './pull-records';
import type { VolumeManager } from './volumes';

export interface PeriodicLoopsOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Log;
  syncer: PodSyncer;
  volumes: VolumeManager;
  cgroups: PodCgroups;
  records: PullRecords;
  podLogsDir: string;
  callTimeoutMs: number;
  imageGC: { highThresholdPercent: number; lowThresholdPercent: number; minAgeMs: number };
  diskUsage?: (mountpoint: string) => Promise<DiskUsage | undefined>;
  /** Housekeeping period (default 10 s), image GC period (default 5 min), node refresh period (default 10 s). */
  housekeepingPeriodMs?: number;
  imageGcPeriodMs?: number;
  nodeRefreshPeriodMs?: number;
  /** UIDs of every pod the agent runs, is terminating, or a source holds. */
  knownUids: () => Set<string>;
  /** True once every pod source delivered its first full set. */
  sourcesReady: () => boolean;
  /** Frees the devices of pods not in `active` (the device manager); optional. */
  retainDevices?: (active: ReadonlySet<string>) => Promise<void>;
  /** Reads the Node object again for admission. Never rejects. */
  refreshNode: (signal: AbortSignal) => Promise<void>;
}

export class PeriodicLoops {
  private readonly housekeeping: Housekeeping;
  private readonly imageGc: ImageGc;

  constructor(private readonly o: PeriodicLoopsOptions) {
    this.housekeeping = new Housekeeping({
      runtime: o.runtime,
      syncer: o.syncer,
      volumes: o.volumes,
      cgroups: o.cgroups,
      podLogsDir: o.podLogsDir,
      log: o.log,
      knownUids: () => o.knownUids(),
      sourcesReady: () => o.sourcesReady(),
      callTimeoutMs: o.callTimeoutMs,
    });
    this.imageGc = new ImageGc({
      runtime: o.runtime,
      clock: o.clock,
      log: o.log,
      records: o.records,
      highThresholdPercent: o.imageGC.highThresholdPercent,
      lowThresholdPercent: o.imageGC.lowThresholdPercent,
      minAgeMs: o.imageGC.minAgeMs,
      callTimeoutMs: o.callTimeoutMs,
      ...(o.diskUsage ? { diskUsage: o.diskUsage } : {}),
    });
  }

  /** Runs the three loops until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.allSettled([
      this.every(this.o.housekeepingPeriodMs ?? 10_000, signal, async () => {
        await this.housekeeping.runOnce(signal);
        if (this.o.retainDevices && this.o.sourcesReady()) await this.o.retainDevices(this.o.knownUids());
      }),
      this.every(this.o.imageGcPeriodMs ?? 5 * 60_000, signal, async () => {
        await this.imageGc.runOnce(signal);
      }),
      this.every(this.o.nodeRefreshPeriodMs ?? 10_000, signal, () => this.o.refreshNode(signal)),
    ]);
  }

  /** Runs one housekeeping round now. */
  async housekeepOnce(signal?: AbortSignal): Promise<void> {
    await this.housekeeping.runOnce(signal);
  }

  private async every(ms: number, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.o.clock.sleep(ms, signal))) return;
      try {
        await fn();
      } catch (e) {
        if (signal.aborted) return;
        this.o.log.warn({ error: (e as Error).message }, 'periodic pod task failed');
      }
    }
  }
}
