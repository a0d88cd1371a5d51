/**
 * Pods bound to this node, from the API server, as upstream's kubelet config source
 * (NewSourceApiserver, a reflector with fieldSelector spec.nodeName=<node>): list, then watch
 * from the list's resourceVersion; a stream that ends is reopened from the last version seen; a
 * 410 (the version expired) means list again; other failures wait with a capped back-off and
 * resume the watch from where it stopped.
 */
import type { ApiClient } from '../client/api-client';
import { GoneError } from '../client/client-error';
import { resumingWatch } from '../client/resuming-watch';
import { Backoff } from '../node/backoff';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { podsResource } from './config-objects';
import type { PodSourceHandler } from './pod-source';
import { asPod, type Pod } from '../api/core-v1';

export interface ApiPodSourceOptions {
  client: ApiClient;
  nodeName: string;
  clock: Clock;
  log: Log;
  handler: PodSourceHandler;
  /** Server-side lifetime of each watch stream (default 5 min, with jitter upstream). */
  watchTimeoutSeconds?: number;
  requestTimeoutMs?: number;
}

export class ApiPodSource {
  private listed = false;
  private readonly backoff = new Backoff({ initialMs: 800, maxMs: 30_000, factor: 2 });

  constructor(private readonly o: ApiPodSourceOptions) {}

  /** True once the first list has been delivered. */
  get synced(): boolean {
    return this.listed;
  }

  private get fieldSelector(): string {
    return `spec.nodeName=${this.o.nodeName}`;
  }

  /** Lists and watches until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        if (rv === undefined) rv = await this.list(signal);
        for await (const ev of resumingWatch<Pod>(this.o.client, podsResource, {
          fieldSelector: this.fieldSelector,
          resourceVersion: rv,
          allowWatchBookmarks: true,
          timeoutSeconds: this.o.watchTimeoutSeconds ?? 300,
          signal,
          sleep: (ms, s) => this.o.clock.sleep(ms, s),
        })) {
          const next = ev.object.metadata?.resourceVersion;
          if (next) rv = next;
          const pod = asPod(ev.object);
          if (!pod) continue;
          if (ev.type === 'DELETED') this.o.handler.remove('api', pod);
          else this.o.handler.upsert('api', pod);
          this.backoff.reset();
        }
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof GoneError) {
          this.o.log.info({ resourceVersion: rv }, 'pod watch expired; listing again');
          rv = undefined;
          continue;
        }
        const wait = this.backoff.next();
        this.o.log.warn({ error: (e as Error).message, retryInMs: wait }, 'pod list/watch failed; retrying');
        await this.o.clock.sleep(wait, signal);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<string> {
    const list = await this.o.client.list<Pod>(podsResource, { fieldSelector: this.fieldSelector, signal, timeoutMs: this.o.requestTimeoutMs ?? 30_000 });
    const pods = list.items.map((p) => asPod(p)).filter((p): p is Pod => p !== undefined);
    this.o.handler.snapshot('api', pods);
    this.listed = true;
    this.backoff.reset();
    return list.metadata.resourceVersion ?? '0';
  }
}
