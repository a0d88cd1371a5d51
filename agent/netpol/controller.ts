/**
 * NetworkPolicy enforcement for this node's pods (issue 24 item 6): informers over
 * NetworkPolicies, Pods (all of them: peers may run elsewhere) and Namespaces (their labels) feed
 * one work-queue key; each sync builds our table (nft-netpol.ts, pure) and applies it with one
 * `nft -f -` transaction that replaces the previous table whole (the proxy's runner). Syncs are
 * at least minSyncPeriodMs apart; an unchanged script is not applied again; a failure is retried
 * with the queue's back-off. When run(signal) ends, the table is deleted.
 */
import type { KObject } from '../../apiserver/api/types';
import { Informer } from '../../common/informer/informer';
import { PacedSync } from '../../common/informer/paced-sync';
import { WorkQueue, runWorkers } from '../../common/informer/work-queue';
import type { ApiClient } from '../client/api-client';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
import { namespacesResource, type ResourceRef } from '../client/resources';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { NftRunner } from '../proxy/proxier';
import { buildNetpolTable, renderNetpol, renderNetpolDelete } from './nft-netpol';

export const networkPoliciesResource: ResourceRef = { group: 'networking.svc.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true };
export const allPodsResource: ResourceRef = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };

export interface NetpolOptions {
  client: ApiClient;
  nodeName: string;
  clock: Clock;
  log: Log;
  nft: NftRunner;
  /** Least time between two syncs (default 1 s, as the proxy's). */
  minSyncPeriodMs?: number;
}

/** A change queued this long without a successful sync makes the controller unhealthy (as the proxy's check). */
export const NETPOL_HEALTH_TIMEOUT_MS = 60_000;

export class NetworkPolicyController {
  private readonly policies: Informer<KObject>;
  private readonly pods: Informer<KObject>;
  private readonly namespaces: Informer<KObject>;
  private readonly queue: WorkQueue;
  private readonly paced: PacedSync;
  private applied: string | undefined;
  private syncs = 0;

  constructor(private readonly o: NetpolOptions) {
    const clock = timersFromSleep(o.clock);
    const informer = (r: ResourceRef, name: string) => new Informer<KObject>(apiListWatch(o.client, r), { name, clock, log: o.log, resumeAfterCleanEnd: true });
    this.policies = informer(networkPoliciesResource, 'netpol-policies');
    this.pods = informer(allPodsResource, 'netpol-pods');
    this.namespaces = informer(namespacesResource, 'netpol-namespaces');
    this.queue = new WorkQueue({ clock });
    this.paced = new PacedSync({ queue: this.queue, now: () => o.clock.now(), minIntervalMs: o.minSyncPeriodMs ?? 1000, sync: () => this.sync() });
    const changed = () => this.requestSync();
    for (const inf of [this.policies, this.pods, this.namespaces]) inf.addEventHandler({ onAdd: changed, onUpdate: (a, b) => a !== b && changed(), onDelete: changed });
  }

  /** Follows the objects and keeps the rules in step until the signal aborts; then removes our table. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const all = [this.policies, this.pods, this.namespaces];
    const informers = Promise.all(all.map((i) => i.run(signal)));
    const synced = await Promise.all(all.map((i) => i.whenSynced(signal)));
    if (synced.every(Boolean) && !signal.aborted) {
      this.requestSync();
      await runWorkers(this.queue, () => this.paced.runOnce(), signal, {
        onError: (_k, err) => {
          this.applied = undefined; // the kernel's table is unknown now: apply in full next time
          this.o.log.warn({ err }, 'syncing the network policy rules failed; retrying');
        },
      });
    }
    await informers;
    try {
      await this.o.nft.apply(renderNetpolDelete());
      this.o.log.info({}, 'network policy rules removed');
    } catch (err) {
      this.o.log.warn({ err }, 'removing the network policy rules failed');
    }
  }

  /** Number of successful syncs so far (tests). */
  syncCount(): number {
    return this.syncs;
  }

  /** undefined while the rules are fresh; else why not (a change queued for longer than NETPOL_HEALTH_TIMEOUT_MS). For /readyz. */
  health(): string | undefined {
    const waited = this.paced.pendingMs();
    return waited !== undefined && waited > NETPOL_HEALTH_TIMEOUT_MS ? `network policy rules not synced for ${Math.round(waited / 1000)}s after a change` : undefined;
  }

  private requestSync(): void {
    this.paced.request();
  }

  private async sync(): Promise<void> {
    const table = buildNetpolTable({ policies: this.policies.store.list(), pods: this.pods.store.list(), namespaces: this.namespaces.store.list(), nodeName: this.o.nodeName });
    const script = renderNetpol(table);
    if (script !== this.applied) await this.o.nft.apply(script);
    this.applied = script;
    this.syncs++;
    this.o.log.debug({ chains: table.size, bytes: script.length }, 'network policy rules synced');
  }
}
