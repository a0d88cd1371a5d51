import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { oneOf, qualifiedName } from '../common-validation';
import { invalid, required } from '../field-errors';
import { strAt } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { described, int32, microTime, obj, ptr, str, time } from '../schema-builders';
import type { Now } from '../table';
import { coreEventView, EVENT_LIMITS, eventColumns, isSetTime } from './event-table';

/** core/v1 Event (the legacy events API; events.svc.io/v1 is in events-v1.ts). */

export const EVENT_TYPES: readonly string[] = ['Normal', 'Warning'];
/** Namespaces that may hold events about cluster-scoped objects (upstream default and kube-system). */
const CLUSTER_EVENT_NAMESPACES = ['default', 'svc-system'];

/** core/v1 EventSource, also events/v1's deprecatedSource. */
export const eventSourceSchema = obj('k8s.io.api.core.v1.EventSource', { component: [1, str('Component from which the event is generated.')], host: [2, str('Node name on which the event is generated.')] });

export const coreEventSchema = withMeta(
  'k8s.io.api.core.v1.Event',
  {
    involvedObject: [2, described('The object that this event is about.', objectReferenceSchema)],
    reason: [3, str('This should be a short, machine understandable string that gives the reason for the transition.')],
    message: [4, str('A human-readable description of the status of this operation.')],
    source: [5, described('The component reporting this event.', eventSourceSchema)],
    firstTimestamp: [6, time('The time at which the event was first recorded.')],
    lastTimestamp: [7, time('The time at which the most recent occurrence of this event was recorded.')],
    count: [8, int32('The number of times this event has occurred.')],
    type: [9, str('Type of this event (Normal, Warning).')],
    eventTime: [10, microTime('Time when this Event was first observed.')],
    series: [
      11,
      described(
        'Data about the event series this event represents, if any.',
        obj('k8s.io.api.core.v1.EventSeries', {
          count: [1, int32('Number of occurrences in this series up to the last heartbeat time.')],
          lastObservedTime: [2, microTime('Time of the last occurrence observed.')],
        }),
      ),
    ],
    action: [12, str('What action was taken/failed regarding the involved object.')],
    related: [13, described('Optional secondary object for more complex actions.', objectReferenceSchema)],
    reportingComponent: [14, ptr(str('Name of the controller that emitted this event.'))],
    reportingInstance: [15, ptr(str('ID of the controller instance.'))],
  },
  { required: ['metadata', 'involvedObject'] },
);

/**
 * Upstream legacyValidateEvent, the only validation core/v1 events get (create and update alike):
 * old-style events (no eventTime) must agree with their involved object's namespace; new-style ones
 * need the reporting fields, action and reason. f names the fields as the calling API spells them;
 * view carries their values.
 */
export function legacyEventCauses(
  o: KObject,
  f: { involvedObject: string; reportingController: string; message: string; reason: string; action: string; reportingInstance: string },
  view: { involvedNamespace: string; reportingController: string; reportingInstance: string; action: string; reason: string; message: string },
): Cause[] {
  const out: Cause[] = [];
  const ns = o.metadata?.namespace ?? '';
  const nsPath = `${f.involvedObject}.namespace`;
  if (!isSetTime(o, 'eventTime')) {
    if (!view.involvedNamespace) {
      if (ns !== '' && ns !== 'default') out.push(invalid(nsPath, view.involvedNamespace, 'does not match event.namespace'));
    } else if (ns !== view.involvedNamespace) out.push(invalid(nsPath, view.involvedNamespace, 'does not match event.namespace'));
    return out;
  }
  if (!view.involvedNamespace && !CLUSTER_EVENT_NAMESPACES.includes(ns)) out.push(invalid(nsPath, view.involvedNamespace, 'does not match event.namespace'));
  // Upstream also runs the qualified-name check on an empty value, repeating the Required cause.
  if (!view.reportingController) out.push(required(f.reportingController));
  else out.push(...qualifiedName(f.reportingController, view.reportingController));
  if (!view.reportingInstance) out.push(required(f.reportingInstance));
  if (view.reportingInstance.length > EVENT_LIMITS.reportingInstance) {
    out.push(invalid(f.reportingInstance, '', `can have at most ${EVENT_LIMITS.reportingInstance} characters`));
  }
  if (!view.action) out.push(required(f.action));
  if (view.action.length > EVENT_LIMITS.action) out.push(invalid(f.action, '', `can have at most ${EVENT_LIMITS.action} characters`));
  if (!view.reason) out.push(required(f.reason));
  if (view.reason.length > EVENT_LIMITS.reason) out.push(invalid(f.reason, '', `can have at most ${EVENT_LIMITS.reason} characters`));
  if (view.message.length > EVENT_LIMITS.note) out.push(invalid(f.message, '', `can have at most ${EVENT_LIMITS.note} characters`));
  return out;
}

function validate(o: KObject): Cause[] {
  const out = legacyEventCauses(
    o,
    { involvedObject: 'involvedObject', reportingController: 'reportingComponent', message: 'message', reason: 'reason', action: 'action', reportingInstance: 'reportingInstance' },
    {
      involvedNamespace: strAt(o, 'involvedObject', 'namespace'),
      reportingController: strAt(o, 'reportingComponent'),
      reportingInstance: strAt(o, 'reportingInstance'),
      action: strAt(o, 'action'),
      reason: strAt(o, 'reason'),
      message: strAt(o, 'message'),
    },
  );
  // Stricter than upstream's legacy path (which accepts any type): only the two documented types.
  out.push(...oneOf('type', o.type, EVENT_TYPES));
  return out;
}

export function makeCoreEventType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    listKind: 'EventList',
    namespaced: true,
    shortNames: ['ev'],
    schema: coreEventSchema,
    hasStatus: false,
    specFields: [],
    fieldSelectors: {
      'involvedObject.kind': (o) => strAt(o, 'involvedObject', 'kind'),
      'involvedObject.namespace': (o) => strAt(o, 'involvedObject', 'namespace'),
      'involvedObject.name': (o) => strAt(o, 'involvedObject', 'name'),
      'involvedObject.uid': (o) => strAt(o, 'involvedObject', 'uid'),
      'involvedObject.apiVersion': (o) => strAt(o, 'involvedObject', 'apiVersion'),
      'involvedObject.resourceVersion': (o) => strAt(o, 'involvedObject', 'resourceVersion'),
      'involvedObject.fieldPath': (o) => strAt(o, 'involvedObject', 'fieldPath'),
      reason: (o) => strAt(o, 'reason'),
      reportingComponent: (o) => strAt(o, 'reportingComponent'),
      source: (o) => strAt(o, 'source', 'component') || strAt(o, 'reportingComponent'),
      type: (o) => strAt(o, 'type'),
    },
    tableColumns: eventColumns(now, coreEventView),
    validate,
  };
}

export const coreEventType: ResourceType = makeCoreEventType();
