/**
 * svc-node's network proxy (issue 24 item 3; upstream kube-proxy's nftables mode, one per node as
 * k3s embeds it): informers over Services and EndpointSlices feed one work-queue key; each sync
 * reads both caches, builds the table of each IP family (nft-rules.ts, pure) and applies it with
 * one `nft -f -` transaction (all families in one script).
 *
 * - Start: waits for both informers' first lists, then syncs in full, replacing any table of
 *   ours a previous run left behind.
 * - Later syncs are incremental (only the difference from the table last applied); after a
 *   failure, or when the difference cannot be expressed in place, the next sync is full. Failures
 *   are retried with the work queue's back-off.
 * - Syncs are at least minSyncPeriodMs apart (upstream's minSyncPeriod, 1 s): changes arriving
 *   meanwhile are applied together by the next sync.
 * - After each successful sync, stale UDP conntrack entries are deleted (conntrack.ts).
 * - When run(signal) ends, our table is deleted: every rule and set the proxy made is gone.
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
import type { Family, NftTable } from './nft-model';
import { renderDelete, renderDiff, renderFull } from './nft-render';
import { FragmentCache, buildTable, type RuleOptions } from './nft-rules';
import { PortsMemo, servicePortsOf, type ServicePortInfo } from './service-ports';

export const servicesResource: ResourceRef = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true };
export const endpointSlicesResource: ResourceRef = { group: 'discovery.svc.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true };

/** Applies one nft script as a single transaction; rejects (with nft's message) when nft refuses it. */
export interface NftRunner {
  apply(script: string): Promise<void>;
}

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
  nft: NftRunner;
  conntrack?: ConntrackRunner;
  families: readonly Family[];
  rules: RuleOptions;
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
  private applied: NftTable[] | undefined;
  private appliedPorts: ServicePortInfo[] = [];
  private lastSuccess: number | undefined;
  private syncs = 0;
  /** One fragment cache per family: unchanged Service ports are not rebuilt. */
  private readonly caches = new Map<Family, FragmentCache>();
  /** Unchanged Services keep their ports (and so their cached fragments). */
  private readonly memo = new PortsMemo();

  constructor(private readonly o: ProxierOptions) {
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
          this.applied = undefined; // the kernel's table is unknown now: the next sync is full
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
    const tables = this.o.families.map((f) => buildTable(f, ports, this.o.rules, this.cacheOf(f)));
    let script: string | undefined;
    if (this.applied) {
      const parts = tables.map((t, i) => renderDiff(this.applied![i], t));
      if (parts.every((p) => p !== undefined)) script = parts.join('');
    }
    const full = script === undefined;
    if (full) script = tables.map(renderFull).join('');
    if (script !== '') await this.o.nft.apply(script!);
    this.applied = tables;
    const previous = this.appliedPorts;
    this.appliedPorts = ports;
    this.syncs++;
    this.lastSuccess = this.o.clock.now();
    this.o.observer?.synced(elapsed() - t0, full, this.lastSuccess);
    this.o.log.debug({ full, services: ports.length, bytes: script!.length, seconds: elapsed() - t0 }, 'proxy rules synced');
    if (this.o.conntrack) await this.clearStaleFlows(previous, ports);
  }

  private cacheOf(f: Family): FragmentCache {
    let c = this.caches.get(f);
    if (!c) this.caches.set(f, (c = new FragmentCache()));
    return c;
  }

  private async clearStaleFlows(prev: ServicePortInfo[], next: ServicePortInfo[]): Promise<void> {
    for (const args of staleUdpFlows(prev, next)) {
      // A failed cleanup is logged, not retried: the rules are right, only old flows linger.
      await this.o.conntrack!.deleteFlows(args).catch((err: unknown) => this.o.log.warn({ err, args }, 'deleting stale UDP conntrack entries failed'));
    }
  }

  /** Deletes our table in every family (the clean shutdown). */
  private async cleanUp(): Promise<void> {
    try {
      await this.o.nft.apply(this.o.families.map(renderDelete).join(''));
      this.o.log.info({}, 'proxy rules removed');
    } catch (err) {
      this.o.log.warn({ err }, 'removing the proxy rules failed');
    }
  }
}
