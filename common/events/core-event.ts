import type { EventObjectRef } from './recorder';

/**
 * The core/v1 Event as the recorder writes it (upstream's legacy record package writes core/v1
 * Events; the API server serves the same stored object as events.svc.io/v1 too). Timestamps are
 * RFC 3339 strings with second precision, as metav1.Time.
 */
export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string; [k: string]: unknown };
  involvedObject: EventObjectRef;
  reason: string;
  message: string;
  source: EventSource;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  type: string;
  action?: string;
  related?: EventObjectRef;
  reportingComponent: string;
  reportingInstance: string;
}

/** Who reports: the component (kubelet, default-scheduler, node-controller, ...) and its host or instance. */
export interface EventSource {
  component: string;
  host?: string;
}

/** What a repeat changes on the existing event (upstream's two-way strategic merge patch of these fields). */
export interface EventPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

/** RFC 3339 with second precision in UTC, as metav1.Time serializes. */
export function eventTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The epoch milliseconds of an RFC 3339 timestamp (0 when unset or unreadable). */
export function parseEventTime(s: string | undefined): number {
  const ms = s ? Date.parse(s) : NaN;
  return Number.isNaN(ms) ? 0 : ms;
}
