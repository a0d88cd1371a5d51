/**
 * The event recorder every component writes Events through (spec 2.7; upstream client-go's
 * record.EventRecorder / events.EventRecorder in one): consumers depend on this interface only.
 * `EventBroadcaster` (broadcaster.ts) implements it over an event sink; `NOOP_RECORDER` records
 * nothing.
 */

/** The object an event is about (core/v1 ObjectReference; events/v1 regarding). */
export interface EventObjectRef {
  apiVersion?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventRecorder {
  /** Records an event about `regarding`; never throws, never blocks the caller (writes are queued). */
  event(regarding: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string, opts?: { action?: string; related?: EventObjectRef }): void;
}

/** A recorder that drops every event: for tests and components run without an event sink. */
export const NOOP_RECORDER: EventRecorder = { event: () => {} };
