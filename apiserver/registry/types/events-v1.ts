import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { immutable, invalid, required } from '../field-errors';
import { num, rec, strAt } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { described, int32, microTime, obj, ptr, str, time } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import type { Now } from '../table';
import { eventColumns, isSetTime, v1EventView } from './event-table';
import { EVENT_TYPES, eventSourceSchema, legacyEventCauses } from './events';

/** events.svc.io/v1 Event (spec 2.7): the structured events API. */

const DEPRECATED_FIELDS = ['deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'] as const;
const IMMUTABLE_FIELDS = [
  'regarding',
  'reason',
  'note',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
] as const;

export const eventV1Schema = withMeta(
  'k8s.io.api.events.v1.Event',
  {
    eventTime: [2, microTime('Time when this Event was first observed.')],
    series: [
      3,
      described(
        'Data about the event series this event represents, if any.',
        obj(
          'k8s.io.api.events.v1.EventSeries',
          {
            count: [1, ptr(int32('Number of occurrences in this series up to the last heartbeat time.'))],
            lastObservedTime: [2, microTime('Time of the last occurrence observed.')],
          },
          { required: ['count', 'lastObservedTime'] },
        ),
      ),
    ],
    reportingController: [4, str('Name of the controller that emitted this Event, e.g. svc.io/kubelet.')],
    reportingInstance: [5, str('ID of the controller instance.')],
    action: [6, str('What action was taken/failed regarding the regarding object.')],
    reason: [7, str('Why the action was taken.')],
    regarding: [8, described('The object this event is about.', objectReferenceSchema)],
    related: [9, described('Optional secondary object for more complex actions.', objectReferenceSchema)],
    note: [10, str('A human-readable description of the status of this operation.')],
    type: [11, str('Normal or Warning.')],
    deprecatedSource: [12, described('Deprecated field assuring backward compatibility with core.v1 Event.', eventSourceSchema)],
    deprecatedFirstTimestamp: [13, time('Deprecated field assuring backward compatibility with core.v1 Event.')],
    deprecatedLastTimestamp: [14, time('Deprecated field assuring backward compatibility with core.v1 Event.')],
    deprecatedCount: [15, int32('Deprecated field assuring backward compatibility with core.v1 Event.')],
  },
  { required: ['eventTime'] },
);

function legacy(o: KObject): Cause[] {
  return legacyEventCauses(
    o,
    { involvedObject: 'regarding', reportingController: 'reportingController', message: 'note', reason: 'reason', action: 'action', reportingInstance: 'reportingInstance' },
    {
      involvedNamespace: strAt(o, 'regarding', 'namespace'),
      reportingController: strAt(o, 'reportingController'),
      reportingInstance: strAt(o, 'reportingInstance'),
      action: strAt(o, 'action'),
      reason: strAt(o, 'reason'),
      message: strAt(o, 'note'),
    },
  );
}

/** Upstream validateV1EventSeries. */
function seriesCauses(o: KObject): Cause[] {
  const series = rec(o.series);
  if (!series) return [];
  const out: Cause[] = [];
  if ((num(series.count) ?? 0) < 2) out.push(invalid('series.count', '', 'should be at least 2'));
  if (!isSetTime(series, 'lastObservedTime')) out.push(required('series.lastObservedTime'));
  return out;
}

/** Upstream ValidateEventCreate / ValidateEventUpdate for the events API version. */
function validate(o: KObject, old?: KObject): Cause[] {
  const out = legacy(o);
  if (old) {
    if (!semanticEqual(o.series, old.series)) out.push(...seriesCauses(o));
    return out;
  }
  out.push(...seriesCauses(o));
  if (!isSetTime(o, 'eventTime')) out.push(required('eventTime'));
  const type = strAt(o, 'type');
  if (!EVENT_TYPES.includes(type)) out.push(invalid('type', '', `has invalid value: ${type}`));
  for (const f of DEPRECATED_FIELDS) {
    const v = o[f];
    const set = f === 'deprecatedSource' ? !!(strAt(v, 'component') || strAt(v, 'host')) : f === 'deprecatedCount' ? (num(v) ?? 0) !== 0 : isSetTime(o, f);
    if (set) out.push(invalid(f, '', 'needs to be unset'));
  }
  return out;
}

/** Everything but the series (and metadata) is fixed once the event exists. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  for (const f of IMMUTABLE_FIELDS) if (!semanticEqual(o[f], old[f])) out.push(immutable(f, o[f] ?? null));
  return out;
}

export function makeEventV1Type(now: Now = Date.now): ResourceType {
  return {
    group: 'events.svc.io',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    listKind: 'EventList',
    namespaced: true,
    shortNames: ['ev'],
    schema: eventV1Schema,
    hasStatus: false,
    specFields: [],
    fieldSelectors: {
      'regarding.kind': (o) => strAt(o, 'regarding', 'kind'),
      'regarding.namespace': (o) => strAt(o, 'regarding', 'namespace'),
      'regarding.name': (o) => strAt(o, 'regarding', 'name'),
      'regarding.uid': (o) => strAt(o, 'regarding', 'uid'),
      'regarding.apiVersion': (o) => strAt(o, 'regarding', 'apiVersion'),
      'regarding.resourceVersion': (o) => strAt(o, 'regarding', 'resourceVersion'),
      'regarding.fieldPath': (o) => strAt(o, 'regarding', 'fieldPath'),
      reason: (o) => strAt(o, 'reason'),
      type: (o) => strAt(o, 'type'),
      reportingController: (o) => strAt(o, 'reportingController'),
    },
    tableColumns: eventColumns(now, v1EventView),
    validate,
    validateUpdate,
    // Upstream stores one events resource, served by both APIs: an event written through either
    // is read, listed and watched through both.
    storedAs: { group: '', resource: 'events', fromStorage: coreEventToV1, toStorage: v1EventToCore },
  };
}

export const eventV1Type: ResourceType = makeEventV1Type();

/** Field renames between the two Event APIs (upstream's conversion through the internal type). */
const RENAMES: ReadonlyArray<[core: string, v1: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];

/**
 * core/v1 Event -> events.svc.io/v1 Event (for serving one stored event through both APIs). An
 * event written without eventTime (the legacy recorders: kubelet, controllers) is served with
 * eventTime = its firstTimestamp: events/v1 requires the field, and clients that check (the Python
 * client's EventsV1Event refuses None) could not list such events otherwise. Upstream serves null
 * there (kubernetes-client/python#669).
 */
export function coreEventToV1(o: KObject): KObject {
  const out = renameFields(o, 'events.svc.io/v1', 0);
  if (!isSetTime(out, 'eventTime') && isSetTime(out, 'deprecatedFirstTimestamp')) out.eventTime = microTimeOf(strAt(out, 'deprecatedFirstTimestamp'));
  return out;
}

/** events.svc.io/v1 Event -> core/v1 Event; an eventTime coreEventToV1 made up is not stored. */
export function v1EventToCore(o: KObject): KObject {
  const out = renameFields(o, 'v1', 1);
  if (isSetTime(out, 'firstTimestamp') && out.eventTime === microTimeOf(strAt(out, 'firstTimestamp'))) delete out.eventTime;
  return out;
}

/** A metav1.Time (RFC 3339, seconds) as a MicroTime ("...T12:00:00.000000Z"). */
function microTimeOf(t: string): string {
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? t : new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function renameFields(o: KObject, apiVersion: string, from: 0 | 1): KObject {
  const out: KObject = { ...structuredClone(o), apiVersion, kind: 'Event' };
  for (const pair of RENAMES) {
    const src = pair[from];
    const dst = pair[1 - from];
    delete out[dst];
    if (o[src] !== undefined) out[dst] = structuredClone(o[src]);
    delete out[src];
  }
  return out;
}
