/**
 * svc-node's network proxy (issue 24 item 3; upstream kube-proxy, one per node as k3s embeds it):
 * informers over Services and EndpointSlices feed one work-queue key; each sync reads both
 * caches into Service ports (service-ports.ts) and hands them to the mode's rule writer: the
 * nftables mode (nft-writer.ts, one `nft -f -` transaction) or the iptables mode (ipt-writer.ts,
 * `iptables-restore --noflush` per family).
 *
 * - Start: waits for both informers' first lists, then syncs in full, replacing any rules of
 *   ours a previous run left behind.
 * - Later syncs may be incremental (the writer's choice); after a failure the writer is reset and
 *   the next sync is full. Failures are retried with the work queue's back-off.
 * - Syncs are at least minSyncPeriodMs apart (upstream's minSyncPeriod, 1 s): changes arriving
 *   meanwhile are applied together by the next sync.
 * - After each successful sync, stale UDP conntrack entries are deleted (conntrack.ts).
 * - When run(signal) ends, the writer removes our rules: every rule, chain and set the proxy made is gone.
 */
import type { KObject } from '../../apiserver/api/types';
import { Informer } from '../../common/informer/informer';
import { PacedSync } from '../../common/informer/paced-sync';
import { WorkQueue, runWorkers } from '../../common/informer/work-queue';
import type { ApiClient } from '../client/api-client';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
import type { ResourceRef } from '../client/resources';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { staleUdpFlows } from './conntrack';
import type { RuleWriter } from './rule-writer';
import { PortsMemo, servicePortsOf, type ServicePortInfo } from './service-ports';

export const servicesResource: ResourceRef = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true };
export const endpointSlicesResource: ResourceRef = { group: 'discovery.svc.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true };

export type { NftRunner, RuleWriter, WriterSync } from './rule-writer';

/** Deletes the conntrack entries `conntrack -D <args>` selects; rejects when the tool fails. */
export interface ConntrackRunner {
  deleteFlows(args: readonly string[]): Promise<void>;
}

/** Told about every successful sync (the proxy's metrics). Must not throw. */
export interface SyncObserver {
  synced(seconds: number, full: boolean, atMs: number): void;
}

export interface ProxierOptions {
  client: ApiClient;
  nodeName: string;
  clock: Clock;
  log: Log;
  /** The rule writer: the mode (NftWriter, IptablesWriter). */
  writer: RuleWriter;
  conntrack?: ConntrackRunner;
  /** Least time between two syncs (upstream's minSyncPeriod; default 1 s). */
  minSyncPeriodMs?: number;
  observer?: SyncObserver;
  /** Monotonic-enough seconds for durations (default performance.now()/1000); a seam for tests. */
  elapsed?: () => number;
}

/** A change queued this long without a successful sync makes the proxy unhealthy (upstream's healthz timeout is 2 × syncPeriod). */
export const HEALTH_TIMEOUT_MS = 60_000;

export class Proxier {
  private readonly services: Informer<KObject>;
  private readonly slices: Informer<KObject>;
  private readonly queue: WorkQueue;
  private readonly paced: PacedSync;
  private readonly writer: RuleWriter;
  private appliedPorts: ServicePortInfo[] = [];
  private lastSuccess: number | undefined;
  private syncs = 0;
  /** Unchanged Services keep their ports (and so their cached fragments). */
  private readonly memo = new PortsMemo();

  constructor(private readonly o: ProxierOptions) {
    this.writer = o.writer;
    const clock = timersFromSleep(o.clock);
    this.services = new Informer<KObject>(apiListWatch(o.client, servicesResource), { name: 'proxy-services', clock, log: o.log, resumeAfterCleanEnd: true });
    this.slices = new Informer<KObject>(apiListWatch(o.client, endpointSlicesResource), { name: 'proxy-endpointslices', clock, log: o.log, resumeAfterCleanEnd: true });
    this.queue = new WorkQueue({ clock });
    this.paced = new PacedSync({ queue: this.queue, now: () => o.clock.now(), minIntervalMs: o.minSyncPeriodMs ?? 1000, sync: () => this.sync() });
    const changed = () => this.requestSync();
    for (const inf of [this.services, this.slices]) inf.addEventHandler({ onAdd: changed, onUpdate: (a, b) => a !== b && changed(), onDelete: changed });
  }

  /** Follows the objects and keeps the rules in step until the signal aborts; then removes our table. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = Promise.all([this.services.run(signal), this.slices.run(signal)]);
    const synced = await Promise.all([this.services.whenSynced(signal), this.slices.whenSynced(signal)]);
    if (synced.every(Boolean) && !signal.aborted) {
      this.requestSync();
      await runWorkers(this.queue, () => this.paced.runOnce(), signal, {
        onError: (_k, err) => {
          this.writer.reset(); // what the kernel holds is unknown now: the next sync is full
          this.o.log.warn({ err }, 'syncing the proxy rules failed; retrying');
        },
      });
    }
    await informers;
    await this.cleanUp();
  }

  /** Number of successful syncs so far (for tests and the bench). */
  syncCount(): number {
    return this.syncs;
  }

  /** undefined while the rules are fresh; else why not (a change queued for longer than HEALTH_TIMEOUT_MS). For /readyz. */
  health(): string | undefined {
    const waited = this.paced.pendingMs();
    return waited !== undefined && waited > HEALTH_TIMEOUT_MS ? `proxy rules not synced for ${Math.round(waited / 1000)}s after a change` : undefined;
  }

  private requestSync(): void {
    this.paced.request();
  }

  private async sync(): Promise<void> {
    const elapsed = this.o.elapsed ?? (() => performance.now() / 1000);
    const t0 = elapsed();
    const ports = servicePortsOf(this.services.store.list(), this.slices.store.list(), this.o.nodeName, this.memo);
    const { full, bytes } = await this.writer.sync(ports);
    const previous = this.appliedPorts;
    this.appliedPorts = ports;
    this.syncs++;
    this.lastSuccess = this.o.clock.now();
    this.o.observer?.synced(elapsed() - t0, full, this.lastSuccess);
    this.o.log.debug({ full, services: ports.length, bytes, seconds: elapsed() - t0 }, 'proxy rules synced');
    if (this.o.conntrack) await this.clearStaleFlows(previous, ports);
  }

  private async clearStaleFlows(prev: ServicePortInfo[], next: ServicePortInfo[]): Promise<void> {
    for (const args of staleUdpFlows(prev, next)) {
      // A failed cleanup is logged, not retried: the rules are right, only old flows linger.
      await this.o.conntrack!.deleteFlows(args).catch((err: unknown) => this.o.log.warn({ err, args }, 'deleting stale UDP conntrack entries failed'));
    }
  }

  /** Removes our rules in every family (the clean shutdown). */
  private async cleanUp(): Promise<void> {
    try {
      await this.writer.cleanUp();
      this.o.log.info({}, 'proxy rules removed');
    } catch (err) {
      this.o.log.warn({ err }, 'removing the proxy rules failed');
    }
  }
}
