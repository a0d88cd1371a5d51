import type { Logger } from 'pino';
import { EventBroadcaster, type DropReason } from '../../common/events/broadcaster';
import type { EventRecorder } from '../../common/events/recorder';
import { realClock, type Clock } from '../../common/informer/clock';
import type { ResourceRegistry } from '../registry/builtin';
import { StoreEventSink } from '../store/event-sink';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';

export interface EventRecordersOptions {
  log: Logger;
  clock?: Clock;
  /** Told of each event not written (apiserver_events_dropped_total). */
  onDropped?: (component: string, reason: DropReason) => void;
}

/**
 * The event recorders of svc-apiserver's loops: one broadcaster per component (as each of
 * upstream's controllers, and the scheduler, has its own broadcaster and correlator), writing
 * through the store as that component (controllerContext: system:controller:<component>, field
 * manager <component>). run() writes until the process stops; recorders asked for later start
 * writing at once. Their events outlive a loss of leadership, as upstream's queued events do.
 */
export class EventRecorders {
  private readonly broadcasters = new Map<string, EventBroadcaster>();
  private signal?: AbortSignal;
  private readonly runs: Promise<void>[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly o: EventRecordersOptions,
  ) {}

  /** The recorder of `component` (source.component and reportingComponent), instance its host (source.host, reportingInstance) when it has one. */
  recorder(component: string, instance?: string): EventRecorder {
    const key = `${component}\0${instance ?? ''}`;
    let b = this.broadcasters.get(key);
    if (!b) {
      const sink = new StoreEventSink(this.store, this.registry.lookup('', 'v1', 'events')!, controllerContext(component));
      b = new EventBroadcaster(sink, {
        clock: this.o.clock ?? realClock,
        log: this.o.log.child({ component: 'events', reporter: component }),
        onDropped: (reason) => this.o.onDropped?.(component, reason),
      });
      this.broadcasters.set(key, b);
      if (this.signal) this.runs.push(b.run(this.signal));
    }
    return b.recorder(instance ? { component, host: instance } : { component });
  }

  /** Writes every recorder's events until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    for (const b of this.broadcasters.values()) this.runs.push(b.run(signal));
    await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
    await Promise.allSettled(this.runs);
  }
}
