import { eventTime, type CoreEvent, type EventPatch } from './core-event';
import { Lru } from './lru';

/**
 * upstream's client-go record.EventCorrelator, with its defaults: it runs on each event just
 * before it is written, and decides whether it is skipped (spam), written as a new object, or
 * written as a patch of the object an identical earlier event made (count + 1, lastTimestamp,
 * message), and when ten events differing only by message come within ten minutes, folds the
 * following ones into one "(combined from similar events): " event.
 */

/** Entries per cache (upstream maxLruCacheEntries). */
export const MAX_LRU_ENTRIES = 4096;
/** Distinct messages of one reason about one object within the interval before they are combined (upstream defaultAggregateMaxEvents). */
export const AGGREGATE_MAX_EVENTS = 10;
/** How long a group of similar events stays open (upstream defaultAggregateIntervalInSeconds). */
export const AGGREGATE_INTERVAL_MS = 600_000;
/** Events a source may burst about one object (upstream defaultSpamBurst). */
export const SPAM_BURST = 25;
/** Refill of that budget: one event every 5 minutes (upstream defaultSpamQPS, 1/300). */
export const SPAM_QPS = 1 / 300;

export interface CorrelatorOptions {
  /** Milliseconds since the epoch. */
  now: () => number;
  lruEntries?: number;
  burst?: number;
  qps?: number;
  maxEvents?: number;
  intervalMs?: number;
}

/** What to do with an event: skip it, create it, or (patch set) patch the existing object it names. */
export type Correlation = { skip: true } | { skip: false; event: CoreEvent; patch?: EventPatch };

/** Full identity of an event: source, object (with fieldPath), type, reason and message (upstream getEventKey). */
export function eventKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind, o.namespace ?? '', o.name, o.fieldPath ?? '', o.uid ?? '', o.apiVersion ?? '', e.type, e.reason, e.message].join('');
}

/** Source and object, the spam filter's unit (upstream getSpamKey). */
export function spamKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind, o.namespace ?? '', o.name, o.uid ?? '', o.apiVersion ?? ''].join('');
}

/** Everything but the message (upstream EventAggregatorByReasonFunc). */
function aggregateKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind, o.namespace ?? '', o.name, o.uid ?? '', o.apiVersion ?? '', e.type, e.reason, e.reportingComponent, e.reportingInstance].join('');
}

/** A token bucket (golang.org/x/time/rate as flowcontrol's TryAccept uses it): full at first. */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  tryAccept(now: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** What the correlator remembers of an event it let through (upstream eventLog). */
interface Observation {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion?: string;
}

export class EventCorrelator {
  private readonly spam: Lru<TokenBucket>;
  private readonly groups: Lru<{ messages: Set<string>; last: number }>;
  private readonly observed: Lru<Observation>;
  private readonly o: Required<CorrelatorOptions>;

  constructor(o: CorrelatorOptions) {
    this.o = { lruEntries: MAX_LRU_ENTRIES, burst: SPAM_BURST, qps: SPAM_QPS, maxEvents: AGGREGATE_MAX_EVENTS, intervalMs: AGGREGATE_INTERVAL_MS, ...o };
    this.spam = new Lru(this.o.lruEntries);
    this.groups = new Lru(this.o.lruEntries);
    this.observed = new Lru(this.o.lruEntries);
  }

  /** Aggregates, counts, then filters spam, in upstream's order (a repeat spends a token too). */
  correlate(input: CoreEvent): Correlation {
    const { event: aggregated, key } = this.aggregate(input);
    const { event, patch } = this.observe(aggregated, key);
    if (this.isSpam(event)) return { skip: true };
    return patch ? { skip: false, event, patch } : { skip: false, event };
  }

  /** Remembers what the server stored (name, resourceVersion, count), as upstream's UpdateState. */
  updateState(stored: CoreEvent): void {
    this.observed.set(eventKey(stored), {
      count: stored.count,
      firstTimestamp: stored.firstTimestamp,
      name: stored.metadata.name,
      resourceVersion: stored.metadata.resourceVersion,
    });
  }

  private isSpam(e: CoreEvent): boolean {
    const key = spamKey(e);
    const now = this.o.now();
    const bucket = this.spam.get(key) ?? new TokenBucket(this.o.qps, this.o.burst, now);
    const accepted = bucket.tryAccept(now);
    this.spam.set(key, bucket);
    return !accepted;
  }

  /**
   * Upstream EventAggregate: below the threshold of distinct messages the event goes on under its
   * own key; at it, a new combined event is made, keyed by the group so later ones count on it.
   */
  private aggregate(e: CoreEvent): { event: CoreEvent; key: string } {
    const now = this.o.now();
    const groupKey = aggregateKey(e);
    let group = this.groups.get(groupKey);
    if (!group || now - group.last > this.o.intervalMs) group = { messages: new Set(), last: now };
    group.messages.add(e.message);
    group.last = now;
    this.groups.set(groupKey, group);
    if (group.messages.size < this.o.maxEvents) return { event: e, key: eventKey(e) };
    // Upstream pops an arbitrary member to keep the set at the threshold.
    const first = group.messages.values().next();
    if (!first.done) group.messages.delete(first.value);
    const t = eventTime(now);
    const combined: CoreEvent = {
      ...e,
      metadata: { name: eventName(e.involvedObject.name, now), namespace: e.metadata.namespace },
      count: 1,
      firstTimestamp: t,
      lastTimestamp: t,
      message: `(combined from similar events): ${e.message}`,
    };
    return { event: combined, key: groupKey };
  }

  /** Upstream eventObserve: an event seen before becomes a patch of the first one's object. */
  private observe(e: CoreEvent, key: string): { event: CoreEvent; patch?: EventPatch } {
    const last = this.observed.get(key);
    let event = e;
    let patch: EventPatch | undefined;
    if (last && last.count > 0) {
      const metadata = { ...e.metadata, name: last.name };
      if (last.resourceVersion !== undefined) metadata.resourceVersion = last.resourceVersion;
      event = { ...e, metadata, firstTimestamp: last.firstTimestamp, count: last.count + 1 };
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.observed.set(key, { count: event.count, firstTimestamp: event.firstTimestamp, name: event.metadata.name, resourceVersion: event.metadata.resourceVersion });
    return patch ? { event, patch } : { event };
  }
}

let sequence = 0;

/**
 * The name of a new event: the object's name, a dot, and the time in nanoseconds in hex (upstream
 * `%v.%x` of UnixNano). Milliseconds are all a JS clock gives, so a counter fills the rest and two
 * events of one millisecond still get different names.
 */
export function eventName(objectName: string, nowMs: number): string {
  sequence = (sequence + 1) % 1_000_000;
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(sequence);
  return `${objectName}.${nanos.toString(16)}`;
}
