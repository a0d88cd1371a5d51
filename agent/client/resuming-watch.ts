/**
 * A watch that outlives single streams: when the server ends a stream (its timeout), a new one
 * starts from the last resourceVersion seen (events and bookmarks alike), so nothing is missed
 * and nothing is repeated (spec 6.1, Reconnect). A start version that has expired surfaces as
 * GoneError: the caller must list (or get) again and watch from the fresh version.
 */
import type { KObject } from '../../apiserver/api/types';
import type { ApiClient, WatchEvent, WatchOptions } from './api-client';
import type { ResourceRef } from './resources';

export interface ResumingWatchOptions extends WatchOptions {
  /** Pause before re-opening after a stream that delivered nothing, so a server that ends streams at once is not hammered. */
  idleReopenDelayMs?: number;
  /** Waits ms or until the signal aborts (the agent's Clock.sleep). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>;
}

/** Yields events across stream ends until the signal aborts; throws the stream's ClientError (GoneError on 410). */
export async function* resumingWatch<T extends KObject>(client: ApiClient, r: ResourceRef, o: ResumingWatchOptions): AsyncGenerator<WatchEvent<T>> {
  let rv = o.resourceVersion;
  const { sleep, idleReopenDelayMs, ...watchOpts } = o;
  while (!o.signal?.aborted) {
    let delivered = 0;
    for await (const ev of client.watch<T>(r, { ...watchOpts, resourceVersion: rv })) {
      const next = ev.object.metadata?.resourceVersion;
      if (next) rv = next;
      delivered++;
      if (ev.type !== 'BOOKMARK') yield ev;
    }
    if (delivered === 0 && !o.signal?.aborted) await sleep(idleReopenDelayMs ?? 1000, o.signal);
  }
}
