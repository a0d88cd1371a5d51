import type { CoreEvent, EventPatch } from './core-event';

/**
 * Where a broadcaster writes events (upstream's record.EventSink): svc-node writes through its API
 * client, svc-apiserver's own loops through the in-process ObjectStore. A sink reports the
 * outcomes the recorder acts on with EventSinkError; anything else it throws is taken as the API
 * being unreachable, and the write is retried.
 */
export interface EventSink {
  /** Creates the event in metadata.namespace; resolves the stored event (its resourceVersion). */
  create(event: CoreEvent): Promise<CoreEvent>;
  /** Patches the existing event (a repeat: count, lastTimestamp, message); resolves the stored event. */
  patch(namespace: string, name: string, patch: EventPatch): Promise<CoreEvent>;
}

/**
 * An answer of the API the recorder acts on: `notFound` (a patched event is gone: it is created
 * again), `rejected` (the API refused the event: invalid, already exists, namespace terminating,
 * forbidden; it is dropped, never retried, as upstream's recordEvent drops on a StatusError).
 */
export class EventSinkError extends Error {
  constructor(
    readonly outcome: 'notFound' | 'rejected',
    message: string,
  ) {
    super(message);
    this.name = 'EventSinkError';
  }
}
