/**
 * The agent's event sink (upstream's v1core.EventSinkImpl): creates core/v1 Events through the
 * API client and patches repeats with a strategic merge patch, as the kubelet does; written with
 * the node's own credentials (system:node:<name>, which the Node authorizer lets create and patch
 * events). The API's answers become what the recorder acts on: 404 (a patched event is gone),
 * other refusals (dropped), and no answer, 429 or 5xx (retried).
 */
import type { CoreEvent, EventPatch } from '../../common/events/core-event';
import { EventSinkError, type EventSink } from '../../common/events/event-sink';
import type { KObject } from '../../apiserver/api/types';
import type { ApiClient } from './api-client';
import { ClientError } from './client-error';
import type { ResourceRef } from './resources';

export const eventsResource: ResourceRef = { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true };

export class ApiEventSink implements EventSink {
  constructor(
    private readonly client: ApiClient,
    /** Per-request deadline. */
    private readonly timeoutMs = 10_000,
  ) {}

  async create(event: CoreEvent): Promise<CoreEvent> {
    try {
      return await this.client.create<KObject & CoreEvent>(eventsResource, event as KObject & CoreEvent, { namespace: event.metadata.namespace, timeoutMs: this.timeoutMs });
    } catch (err) {
      throw sinkError(err);
    }
  }

  async patch(namespace: string, name: string, patch: EventPatch): Promise<CoreEvent> {
    try {
      return await this.client.patch<KObject & CoreEvent>(eventsResource, name, 'strategic', patch, { namespace, timeoutMs: this.timeoutMs });
    } catch (err) {
      throw sinkError(err);
    }
  }
}

function sinkError(err: unknown): unknown {
  if (!(err instanceof ClientError) || err.retriable) return err;
  return new EventSinkError(err.status === 404 ? 'notFound' : 'rejected', err.message);
}
