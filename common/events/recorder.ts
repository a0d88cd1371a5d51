/**
 * What every component of both daemons records events through (upstream's
 * client-go/tools/record EventRecorder and tools/events EventRecorder in one). Consumers depend on
 * this interface only; `EventBroadcaster` (broadcaster.ts) implements it, `NOOP_RECORDER` records
 * nothing.
 */

export interface EventRecorder {
  /** Records an event about `regarding`; never throws, never blocks the caller (writes are queued). */
  event(regarding: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string, opts?: { action?: string; related?: EventObjectRef }): void;
}

/** The object an event is about (core/v1 ObjectReference; events/v1 `regarding`). */
export interface EventObjectRef {
  apiVersion?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** Records nothing: for tests and for components that have no sink. */
export const NOOP_RECORDER: EventRecorder = { event: () => undefined };
