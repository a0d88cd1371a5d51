import { StorageError, type StorageEvent } from './storage';

/** Default bound of what one watcher may have queued (live events) or read in one page: 16 MiB. */
export const DEFAULT_BUFFER_BYTES = 16 * 1024 * 1024;

/** What holding an event costs: its value and previous value. */
export function eventBytes(ev: StorageEvent): number {
  return ev.value.length + (ev.prevValue && ev.prevValue !== ev.value ? ev.prevValue.length : 0);
}

/** What the hub needs from a store that keeps its history as a revision-ordered log. */
export interface WatchLog {
  /**
   * Events for keys with the prefix with revision > after, oldest first: at most limit, and no more
   * beyond the first than fit in maxBytes (eventBytes). complete: nothing newer is left. Synchronous.
   */
  readAfter(prefix: string, after: number, limit: number, maxBytes: number): { events: StorageEvent[]; complete: boolean };
  /** The oldest revision the log still holds history after. */
  compactedRevision(): number;
}

interface Watcher {
  prefix: string;
  /** Events read or delivered but not yet handed to the consumer, in revision order. */
  queue: StorageEvent[];
  /** eventBytes of the events in queue. */
  queueBytes: number;
  /** True once the watcher has caught up with the log and receives commits as they happen. */
  live: boolean;
  wake: (() => void) | null;
}

/**
 * In-process fan-out of committed writes to watchers of a log-structured store.
 *
 * A watcher starts in catch-up mode and reads the log in pages after the last revision it handed
 * out. When a page comes back complete it has reached the head, and in the same synchronous step
 * switches to live mode, where publish() appends each commit to its queue. Both steps run inside
 * one JavaScript turn with the synchronous log reads, so no commit can fall between them: no gap,
 * and no duplicate (a revision filter guards that anyway). A consumer that falls more than
 * bufferLimit events or bufferBytes behind is put back into catch-up mode and its queue dropped,
 * so memory stays bounded (pages are bounded the same way) and it re-reads what it missed from the
 * log (or gets Compacted if that history is gone), much as etcd moves slow watchers to its
 * unsynced group.
 */
export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private closed = false;

  constructor(
    private readonly log: WatchLog,
    private readonly bufferLimit: number,
    private readonly bufferBytes = DEFAULT_BUFFER_BYTES,
    private readonly pageSize = 256,
  ) {}

  /** Hands a just-committed event to every live watcher of its prefix. Never blocks. */
  publish(ev: StorageEvent): void {
    for (const w of this.watchers) {
      if (!w.live || !ev.key.startsWith(w.prefix)) continue;
      const size = eventBytes(ev);
      if (w.queue.length >= this.bufferLimit || (w.queue.length > 0 && w.queueBytes + size > this.bufferBytes)) {
        w.live = false;
        w.queue = [];
        w.queueBytes = 0;
      } else {
        w.queue.push(ev);
        w.queueBytes += size;
      }
      w.wake?.();
    }
  }

  /** Events with the prefix after fromRevision until the signal aborts; see the class comment. */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StorageEvent> {
    return { [Symbol.asyncIterator]: () => this.stream(prefix, fromRevision, signal) };
  }

  /** Ends every watcher: their iterators throw Unavailable. */
  close(): void {
    this.closed = true;
    for (const w of this.watchers) w.wake?.();
  }

  private async *stream(prefix: string, fromRevision: number, signal: AbortSignal): AsyncGenerator<StorageEvent> {
    const w: Watcher = { prefix, queue: [], queueBytes: 0, live: false, wake: null };
    const onAbort = (): void => w.wake?.();
    signal.addEventListener('abort', onAbort);
    this.watchers.add(w);
    let last = fromRevision;
    try {
      while (!signal.aborted) {
        if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
        const ev = w.queue.shift();
        if (ev) {
          w.queueBytes -= eventBytes(ev);
          if (ev.revision <= last) continue;
          last = ev.revision;
          yield ev;
          continue;
        }
        if (!w.live) {
          const compacted = this.log.compactedRevision();
          if (last < compacted) {
            throw new StorageError('Compacted', `required revision ${last} has been compacted (oldest is ${compacted})`);
          }
          const page = this.log.readAfter(prefix, last, this.pageSize, this.bufferBytes);
          w.queue = page.events;
          w.queueBytes = page.events.reduce((n, e) => n + eventBytes(e), 0);
          if (page.complete) w.live = true;
          continue;
        }
        await new Promise<void>((resolve) => {
          w.wake = resolve;
        });
        w.wake = null;
      }
    } finally {
      this.watchers.delete(w);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
