import type { EventObjectRef, EventRecorder } from '../../common/events/recorder';

/** One event as a component recorded it. */
export interface RecordedEvent {
  regarding: EventObjectRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  action?: string;
  related?: EventObjectRef;
}

/** An EventRecorder for unit tests: keeps what it is given, in order. */
export class RecordingRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  event(regarding: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string, opts?: { action?: string; related?: EventObjectRef }): void {
    this.events.push({ regarding, type, reason, message, ...opts });
  }

  /** "reason: message" of each event, for compact assertions. */
  lines(): string[] {
    return this.events.map((e) => `${e.reason}: ${e.message}`);
  }

  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }
}
