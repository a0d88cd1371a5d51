import type { KObject } from '../../api/types';
import { get, num, rec, str, strAt } from '../obj-access';
import type { TableColumn } from '../resource-type';
import { column, translateTimestampSince, type Now } from '../table';

/**
 * Event table columns as upstream's printEvent, shared by core/v1 and events.svc.io/v1 Events
 * (upstream prints both from the same internal type). Upstream's trailing "Name" column
 * (priority 1) is left out: the server always puts Name first.
 */

/** The fields printEvent reads, under their core/v1 names. */
export interface EventView {
  firstTimestamp: string;
  lastTimestamp: string;
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  count: number;
  type: string;
  reason: string;
  kind: string;
  name: string;
  fieldPath: string;
  sourceComponent: string;
  sourceHost: string;
  reportingController: string;
  reportingInstance: string;
  message: string;
}

function seriesOf(v: unknown): EventView['series'] {
  const s = rec(v);
  return s ? { count: num(s.count) ?? 0, lastObservedTime: str(s.lastObservedTime) ?? '' } : undefined;
}

export function coreEventView(o: KObject): EventView {
  return {
    firstTimestamp: strAt(o, 'firstTimestamp'),
    lastTimestamp: strAt(o, 'lastTimestamp'),
    eventTime: strAt(o, 'eventTime'),
    series: seriesOf(o.series),
    count: num(o.count) ?? 0,
    type: strAt(o, 'type'),
    reason: strAt(o, 'reason'),
    kind: strAt(o, 'involvedObject', 'kind'),
    name: strAt(o, 'involvedObject', 'name'),
    fieldPath: strAt(o, 'involvedObject', 'fieldPath'),
    sourceComponent: strAt(o, 'source', 'component'),
    sourceHost: strAt(o, 'source', 'host'),
    reportingController: strAt(o, 'reportingComponent'),
    reportingInstance: strAt(o, 'reportingInstance'),
    message: strAt(o, 'message'),
  };
}

export function v1EventView(o: KObject): EventView {
  return {
    firstTimestamp: strAt(o, 'deprecatedFirstTimestamp'),
    lastTimestamp: strAt(o, 'deprecatedLastTimestamp'),
    eventTime: strAt(o, 'eventTime'),
    series: seriesOf(o.series),
    count: num(o.deprecatedCount) ?? 0,
    type: strAt(o, 'type'),
    reason: strAt(o, 'reason'),
    kind: strAt(o, 'regarding', 'kind'),
    name: strAt(o, 'regarding', 'name'),
    fieldPath: strAt(o, 'regarding', 'fieldPath'),
    sourceComponent: strAt(o, 'deprecatedSource', 'component'),
    sourceHost: strAt(o, 'deprecatedSource', 'host'),
    reportingController: strAt(o, 'reportingController'),
    reportingInstance: strAt(o, 'reportingInstance'),
    message: strAt(o, 'note'),
  };
}

function firstSeen(v: EventView, now: Now): string {
  return v.firstTimestamp ? translateTimestampSince(v.firstTimestamp, now) : translateTimestampSince(v.eventTime, now);
}

function lastSeen(v: EventView, now: Now): string {
  if (v.series) return translateTimestampSince(v.series.lastObservedTime, now);
  return v.lastTimestamp ? translateTimestampSince(v.lastTimestamp, now) : firstSeen(v, now);
}

function count(v: EventView): number {
  if (v.series) return v.series.count;
  // Singleton events of the new API carry no count.
  return v.count === 0 ? 1 : v.count;
}

function target(v: EventView): string {
  return v.name ? `${v.kind.toLowerCase()}/${v.name}` : v.kind.toLowerCase();
}

function source(v: EventView): string {
  const component = v.sourceComponent || v.reportingController;
  const instance = v.sourceHost || v.reportingInstance;
  return instance ? `${component}, ${instance}` : component;
}

export function eventColumns(now: Now, view: (o: KObject) => EventView): TableColumn[] {
  return [
    column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.', (o) => lastSeen(view(o), now)),
    column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future', (o) => view(o).type),
    column('Reason', 'string', 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.', (o) => view(o).reason),
    column('Object', 'string', 'The object that this event is about.', (o) => target(view(o))),
    column('Subobject', 'string', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.', (o) => view(o).fieldPath, 1),
    column('Source', 'string', 'The component reporting this event.', (o) => source(view(o)), 1),
    column('Message', 'string', 'A human-readable description of the status of this operation.', (o) => view(o).message.trim()),
    column('First Seen', 'string', 'The time at which the event was first recorded.', (o) => firstSeen(view(o), now), 1),
    column('Count', 'string', 'The number of times this event has occurred.', (o) => count(view(o)), 1),
  ];
}

/** Used by both Event kinds' validation: upstream legacyValidateEvent's length limits. */
export const EVENT_LIMITS = { reportingInstance: 128, action: 128, reason: 128, note: 1024 } as const;

/** True when the value at path is an RFC 3339 string (a set timestamp). */
export function isSetTime(o: unknown, ...path: string[]): boolean {
  return typeof get(o, ...path) === 'string' && get(o, ...path) !== '';
}
