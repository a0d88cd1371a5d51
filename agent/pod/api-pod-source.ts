/**
 * Pods bound to this node, from the API server, as upstream's kubelet config source
 * (NewSourceApiserver, a reflector with fieldSelector spec.nodeName=<node>), through the shared
 * informer (common/informer) over the REST client (agent/client/list-watch.ts): list, then watch
 * from the list's resourceVersion; a stream that ends is reopened from the last version seen (the
 * reflector's resume, which the informer does on request); a 410 (the version expired) means list
 * again; other failures wait with a capped back-off and resume the watch from where it stopped.
 * Each list reaches the pod manager as one snapshot, each watch event as an upsert or remove.
 */
import { Informer } from '../../common/informer/informer';
import type { ApiClient } from '../client/api-client';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
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
  /** Shortest server-side lifetime of each watch stream; each lasts between it and twice it (default 5 min, upstream's). */
  watchTimeoutSeconds?: number;
  requestTimeoutMs?: number;
}

export class ApiPodSource {
  private readonly informer: Informer<Pod>;

  constructor(o: ApiPodSourceOptions) {
    const lw = apiListWatch<Pod>(o.client, podsResource, { fieldSelector: `spec.nodeName=${o.nodeName}`, listTimeoutMs: o.requestTimeoutMs ?? 30_000 });
    this.informer = new Informer<Pod>(lw, {
      name: 'pod',
      clock: timersFromSleep(o.clock),
      log: o.log,
      minWatchTimeoutMs: (o.watchTimeoutSeconds ?? 300) * 1000,
      resumeAfterCleanEnd: true,
    });
    const pod = (obj: Pod, fn: (p: Pod) => void) => {
      const p = asPod(obj);
      if (p) fn(p);
    };
    this.informer.addEventHandler({
      onReplace: (objs) => o.handler.snapshot('api', objs.map((x) => asPod(x)).filter((p): p is Pod => p !== undefined)),
      onAdd: (obj) => pod(obj, (p) => o.handler.upsert('api', p)),
      onUpdate: (_old, obj) => pod(obj, (p) => o.handler.upsert('api', p)),
      onDelete: (obj) => pod(obj, (p) => o.handler.remove('api', p)),
    });
  }

  /** True once the first list has been delivered. */
  get synced(): boolean {
    return this.informer.hasSynced();
  }

  /** Lists and watches until the signal aborts. Never rejects. */
  run(signal: AbortSignal): Promise<void> {
    return this.informer.run(signal);
  }
}
