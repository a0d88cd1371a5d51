import { sleepOn, type Clock } from '../informer/clock';
import { eventTime, type CoreEvent, type EventPatch, type EventSource } from './core-event';
import { EventCorrelator, eventName } from './correlator';
import { EventSinkError, type EventSink } from './event-sink';
import type { EventObjectRef, EventRecorder } from './recorder';

/** Events waiting to be written at most; more are dropped (upstream maxQueuedEvents, DropIfChannelFull). */
export const MAX_QUEUED_EVENTS = 1000;
/** Attempts per event while the API cannot be reached (upstream maxTriesPerEvent). */
export const MAX_TRIES_PER_EVENT = 12;
/** Pause between those attempts, the first one randomised (upstream defaultSleepDuration). */
export const RETRY_DELAY_MS = 10_000;

/** Why an event was not written: the daemons count these (svc_events_dropped_total). */
export type DropReason = 'QueueFull' | 'Spam' | 'Rejected' | 'RetriesExhausted';

/** The logger the broadcaster reports to (pino's shape). */
export interface EventLog {
  warn(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

export interface EventBroadcasterOptions {
  clock: Clock;
  log: EventLog;
  maxQueued?: number;
  maxTries?: number;
  retryDelayMs?: number;
  /** In [0, 1): spreads the first retry so clients do not all come back at once. */
  random?: () => number;
  /** Told of each event that is not written, with why. */
  onDropped?: (reason: DropReason, event: CoreEvent) => void;
}

/**
 * upstream's record.EventBroadcaster with StartRecordingToSink, for one sink: recorders made by
 * recorder(source) build core/v1 Events stamped with that source (source.component and
 * reportingComponent, source.host and reportingInstance) and queue them without waiting; run()
 * writes them one at a time through the correlator (correlator.ts), creating new events and
 * patching repeats, retrying while the API is unreachable and dropping what it refuses. A full
 * queue drops the newest event, never blocks its caller. Constructing it starts nothing.
 */
export class EventBroadcaster {
  private readonly queue: CoreEvent[] = [];
  private readonly correlator: EventCorrelator;
  private wake?: () => void;
  private busy = false;
  private readonly idleWaiters: Array<() => void> = [];
  /** Events dropped since the queue filled: one warning when it fills, one with the count when it has room again (not a line per event). */
  private droppedWhileFull = 0;

  constructor(
    private readonly sink: EventSink,
    private readonly o: EventBroadcasterOptions,
  ) {
    this.correlator = new EventCorrelator({ now: () => o.clock.now() });
  }

  /** A recorder whose events are reported by `source`. */
  recorder(source: EventSource): EventRecorder {
    return { event: (regarding, type, reason, message, opts) => this.record(source, regarding, type, reason, message, opts) };
  }

  /** Events queued and not yet handled. */
  get queued(): number {
    return this.queue.length;
  }

  /** Writes queued events until the signal aborts; what is still queued then is left unwritten. */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const next = this.queue.shift();
        if (!next) {
          this.settle();
          await new Promise<void>((r) => (this.wake = r));
          this.wake = undefined;
          continue;
        }
        this.busy = true;
        try {
          await this.write(next, signal);
        } finally {
          this.busy = false;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.settle();
    }
  }

  /** Resolves once every event queued so far has been handled (for tests; never waits for run to start). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && !this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private settle(): void {
    if (this.queue.length > 0 || this.busy) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private record(source: EventSource, regarding: EventObjectRef, type: string, reason: string, message: string, opts?: { action?: string; related?: EventObjectRef }): void {
    try {
      // Upstream ValidateEventType: anything but the two types is logged and not recorded.
      if (type !== 'Normal' && type !== 'Warning') {
        this.o.log.warn({ type, reason }, 'unsupported event type; event not recorded');
        return;
      }
      const event = makeEvent(source, regarding, type, reason, message, this.o.clock.now(), opts);
      if (this.queue.length >= (this.o.maxQueued ?? MAX_QUEUED_EVENTS)) {
        // Upstream logs every drop; a burst of thousands is one line here, and the metric counts each.
        if (this.droppedWhileFull++ === 0) this.o.log.warn({ reason, object: `${regarding.kind}/${regarding.name}` }, 'too many queued events; dropping events until the queue has room');
        this.o.onDropped?.('QueueFull', event);
        return;
      }
      if (this.droppedWhileFull > 0) {
        this.o.log.warn({ dropped: this.droppedWhileFull }, `the event queue has room again; ${this.droppedWhileFull} events were dropped while it was full`);
        this.droppedWhileFull = 0;
      }
      this.queue.push(event);
      this.wake?.();
    } catch (err) {
      // The recorder never throws at its caller (a malformed reference, a throwing hook).
      this.o.log.warn({ err }, 'could not record event');
    }
  }

  /** Correlates and writes one event, with upstream recordToSink's retries. */
  private async write(event: CoreEvent, signal: AbortSignal): Promise<void> {
    const c = this.correlator.correlate(event);
    if (c.skip) {
      this.o.log.debug({ reason: event.reason, object: `${event.involvedObject.kind}/${event.involvedObject.name}` }, 'event filtered as spam');
      this.o.onDropped?.('Spam', event);
      return;
    }
    const maxTries = this.o.maxTries ?? MAX_TRIES_PER_EVENT;
    const delayMs = this.o.retryDelayMs ?? RETRY_DELAY_MS;
    for (let tries = 1; ; tries++) {
      if (await this.attempt(c.event, c.patch)) return;
      if (tries >= maxTries) {
        this.o.log.warn({ reason: event.reason, name: c.event.metadata.name }, 'unable to write event (retry limit exceeded)');
        this.o.onDropped?.('RetriesExhausted', c.event);
        return;
      }
      const delay = tries === 1 ? delayMs * (this.o.random ?? Math.random)() : delayMs;
      if (!(await sleepOn(this.o.clock, delay, signal))) return;
    }
  }

  /** One write (upstream recordEvent): patch a repeat, create when new or when the patched one is gone. True when done with the event. */
  private async attempt(event: CoreEvent, patch: EventPatch | undefined): Promise<boolean> {
    try {
      let stored: CoreEvent | undefined;
      if (patch) {
        try {
          stored = await this.sink.patch(event.metadata.namespace, event.metadata.name, patch);
        } catch (err) {
          if (!(err instanceof EventSinkError && err.outcome === 'notFound')) throw err;
        }
      }
      if (!stored) {
        const { resourceVersion: _rv, ...metadata } = event.metadata;
        stored = await this.sink.create({ ...event, metadata });
      }
      this.correlator.updateState(stored);
      return true;
    } catch (err) {
      if (err instanceof EventSinkError) {
        this.o.log.debug({ err: err.message, reason: event.reason, name: event.metadata.name }, 'server rejected event (will not retry)');
        this.o.onDropped?.('Rejected', event);
        return true;
      }
      this.o.log.warn({ err: (err as Error)?.message ?? String(err), reason: event.reason }, 'unable to write event (may retry after sleeping)');
      return false;
    }
  }
}

/** A new core/v1 Event (upstream makeEvent): in the object's namespace, or default for cluster-scoped objects. */
export function makeEvent(
  source: EventSource,
  regarding: EventObjectRef,
  type: string,
  reason: string,
  message: string,
  nowMs: number,
  opts?: { action?: string; related?: EventObjectRef },
): CoreEvent {
  const t = eventTime(nowMs);
  const event: CoreEvent = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(regarding.name, nowMs), namespace: regarding.namespace || 'default' },
    involvedObject: compactRef(regarding),
    reason,
    message,
    source: source.host ? { component: source.component, host: source.host } : { component: source.component },
    firstTimestamp: t,
    lastTimestamp: t,
    count: 1,
    type,
    reportingComponent: source.component,
    reportingInstance: source.host ?? '',
  };
  if (opts?.action) event.action = opts.action;
  if (opts?.related) event.related = compactRef(opts.related);
  return event;
}

/** The reference without unset fields (they are omitted on the wire, as Go's omitempty). */
function compactRef(r: EventObjectRef): EventObjectRef {
  const out: EventObjectRef = { kind: r.kind, name: r.name };
  for (const k of ['apiVersion', 'namespace', 'uid', 'resourceVersion', 'fieldPath'] as const) if (r[k]) out[k] = r[k];
  return out;
}
