import type { CoreEvent, EventPatch } from '../../common/events/core-event';
import { EventSinkError, type EventSink } from '../../common/events/event-sink';
import { ApiError, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from './object-store';
import type { WriteContext } from './write-context';

/**
 * The event sink of svc-apiserver's own loops: writes core/v1 Events through the in-process
 * ObjectStore (with its admission and validation, as a client's write) under the component's
 * write context, so each event is written with its reporter's identity. A repeat merges the
 * correlator's fields into the stored event, what upstream's strategic merge patch of count,
 * lastTimestamp and message does.
 */
export class StoreEventSink implements EventSink {
  constructor(
    private readonly store: ObjectStore,
    /** core/v1 events. */
    private readonly type: ResourceType,
    private readonly ctx: WriteContext,
  ) {}

  async create(event: CoreEvent): Promise<CoreEvent> {
    try {
      return (await this.store.create(this.type, event.metadata.namespace, event as unknown as KObject, this.ctx)) as unknown as CoreEvent;
    } catch (err) {
      throw sinkError(err);
    }
  }

  async patch(namespace: string, name: string, patch: EventPatch): Promise<CoreEvent> {
    try {
      const { object } = await this.store.update(this.type, namespace, name, (cur) => ({ ...cur!, ...patch }), this.ctx);
      return object as unknown as CoreEvent;
    } catch (err) {
      throw sinkError(err);
    }
  }
}

/** The store's answer as the recorder reads it: not found, refused (any other API error but 5xx and 429), else as is (retried). */
function sinkError(err: unknown): unknown {
  if (isNotFound(err)) return new EventSinkError('notFound', (err as Error).message);
  if (err instanceof ApiError && err.code >= 400 && err.code < 500 && err.code !== 429) return new EventSinkError('rejected', err.message);
  return err;
}
