/**
 * The agent's ListerWatcher (common/informer) over its REST client: a list, then watches from a
 * resourceVersion with bookmarks and the informer's watch lifetime as the server-side timeout
 * (timeoutSeconds), as client-go's ListWatch over a REST client. The server's 410 (GoneError, on
 * the watch request or as an ERROR event) becomes ResourceExpiredError, so the informer lists again.
 */
import type { KObject } from '../../apiserver/api/types';
import type { Clock as InformerClock } from '../../common/informer/clock';
import { ResourceExpiredError, type ListerWatcher, type ListResult, type WatchEvent, type WatchHint } from '../../common/informer/list-watch';
import type { ApiClient } from './api-client';
import { GoneError } from './client-error';
import type { ResourceRef } from './resources';

export interface ApiListWatchOptions {
  /** One namespace of a namespaced resource (unset: all). */
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Timeout of each list request (default the client's). */
  listTimeoutMs?: number;
}

export function apiListWatch<T extends KObject>(client: ApiClient, r: ResourceRef, o: ApiListWatchOptions = {}): ListerWatcher<T> {
  const selectors = { namespace: o.namespace, fieldSelector: o.fieldSelector, labelSelector: o.labelSelector };
  return {
    async list(signal: AbortSignal): Promise<ListResult<T>> {
      const list = await client.list<T>(r, { ...selectors, signal, timeoutMs: o.listTimeoutMs });
      return { items: list.items, resourceVersion: list.metadata.resourceVersion ?? '0' };
    },
    watch(from: string, signal: AbortSignal, hint: WatchHint): AsyncIterable<WatchEvent<T>> {
      return follow(client.watch<T>(r, { ...selectors, resourceVersion: from, allowWatchBookmarks: true, timeoutSeconds: Math.max(1, Math.ceil(hint.timeoutMs / 1000)), signal }));
    },
  };
}

async function* follow<T extends KObject>(events: AsyncIterable<{ type: WatchEvent<T>['type']; object: T }>): AsyncGenerator<WatchEvent<T>> {
  try {
    for await (const ev of events) yield { type: ev.type, object: ev.object };
  } catch (err) {
    if (err instanceof GoneError) throw new ResourceExpiredError(err.message);
    throw err;
  }
}

/** The informer's timers over a clock that only sleeps (the agent's Clock). */
export function timersFromSleep(clock: { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<boolean> }): InformerClock {
  return {
    now: () => clock.now(),
    after(ms, fn) {
      const ac = new AbortController();
      void clock.sleep(ms, ac.signal).then((elapsed) => {
        if (elapsed) fn();
      });
      return () => ac.abort();
    },
  };
}
