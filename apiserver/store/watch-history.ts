import type { KObject } from '../api/types';

export interface CachedEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  revision: number;
  object: KObject;
  prevObject?: KObject;
  /** Receipt time, for the 5-minute history window. */
  time: number;
  /** The object's JSON, rendered once and shared by every watcher that sends it unchanged (WatchCache.render). */
  json?: string;
  /**
   * Whole watch-stream chunks of this event in other forms (a protobuf frame, a CBOR item, JSON
   * under a group's other name), each made once and shared by every watcher that sends that form
   * (WatchCache.rendering); keyed by the caller's name of the form.
   */
  renderings?: Map<string, string | Buffer>;
  /**
   * What holding the event costs, in bytes: the stored encodings of object and prevObject (the
   * decoded objects take about as much: their strings dominate), plus json and renderings once made.
   */
  size: number;
}

export interface HistoryLimits {
  /** How long events stay (section 8: 5 minutes). */
  retainMs: number;
  /** At most this many bytes of events (CachedEvent.size); the newest event always stays. */
  maxBytes: number;
  /** At most this many events. */
  maxEvents: number;
}

/**
 * The watch cache's recent events in revision order, bounded by age, bytes and count (upstream's
 * cacher bounds its per-resource ring by count, 100 to 100 × 1024 events, and by a 75 s freshness;
 * one store-wide history here needs bytes too, since one burst of large objects would otherwise
 * hold hundreds of MB for the whole window). Watchers read it by revision, so they share the events
 * rather than each holding a copy; one whose position is trimmed away has fallen behind.
 */
export class WatchHistory {
  private events: CachedEvent[] = [];
  private heldBytes = 0;
  /** Every event with revision > coveredFrom is held. */
  private covered = 0;

  constructor(private readonly limits: HistoryLimits) {}

  get coveredFrom(): number {
    return this.covered;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  get length(): number {
    return this.events.length;
  }

  push(ev: CachedEvent): void {
    this.events.push(ev);
    this.heldBytes += ev.size;
  }

  /** Forgets every event: what follows `start` is all that is covered. */
  reset(start: number): void {
    this.events = [];
    this.heldBytes = 0;
    this.covered = start;
  }

  /**
   * Drops events older than retainMs, then the oldest while over maxBytes or maxEvents, never the
   * newest (a watcher waiting at the head must always find the next event). Returns the events
   * dropped (empty when none were).
   */
  trim(now: number): CachedEvent[] {
    const { retainMs, maxBytes, maxEvents } = this.limits;
    const ev = this.events;
    let n = 0;
    let bytes = this.heldBytes;
    while (n < ev.length && now - ev[n].time > retainMs) bytes -= ev[n++].size;
    while (n < ev.length - 1 && (bytes > maxBytes || ev.length - n > maxEvents)) bytes -= ev[n++].size;
    if (n === 0) return [];
    this.covered = ev[n - 1].revision;
    // New arrays rather than splice: the old one (and every event only it held) becomes garbage at once.
    const dropped = ev.slice(0, n);
    this.events = ev.slice(n);
    this.heldBytes = bytes;
    return dropped;
  }

  /** Sets an event's rendering, adding its bytes to the event's cost and, while the history holds the event, to the total. */
  rendered(ev: CachedEvent, json: string): void {
    ev.json = json;
    this.grew(ev, json.length);
  }

  /** Keeps another form of an event under key (see CachedEvent.renderings), counted as rendered is. */
  renderedAs(ev: CachedEvent, key: string, chunk: string | Buffer): void {
    (ev.renderings ??= new Map()).set(key, chunk);
    this.grew(ev, chunk.length);
  }

  private grew(ev: CachedEvent, bytes: number): void {
    ev.size += bytes;
    if (this.events[this.firstAfter(ev.revision - 1)] === ev) this.heldBytes += bytes;
  }

  /**
   * The first held event under prefix with revision > after, and how far the search looked: the
   * revision of the last held event examined (so the caller's next search starts past events of
   * other prefixes rather than scanning them again), or `after` when none is newer.
   */
  next(prefix: string, after: number): { event?: CachedEvent; scanned: number } {
    const ev = this.events;
    for (let i = this.firstAfter(after); i < ev.length; i++) {
      if (ev[i].key.startsWith(prefix)) return { event: ev[i], scanned: ev[i].revision };
    }
    return { scanned: ev.length > 0 ? Math.max(after, ev[ev.length - 1].revision) : after };
  }

  /** Index of the first held event with revision > after (binary search: events are in revision order). */
  private firstAfter(after: number): number {
    const ev = this.events;
    let lo = 0;
    let hi = ev.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ev[mid].revision <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
