import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeCoreEventType } from '../../../../../apiserver/registry/types/events';
import { coreEventToV1, makeEventV1Type, v1EventToCore } from '../../../../../apiserver/registry/types/events-v1';
import { ago, cells, fields, now } from './fixtures';

const coreType = makeCoreEventType(now);
const v1Type = makeEventV1Type(now);

function coreEvent(extra: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'web.17a', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    reason: 'Pulled',
    message: 'Successfully pulled image ',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: ago(10 * 60_000),
    lastTimestamp: ago(2 * 60_000),
    count: 4,
    type: 'Normal',
    ...extra,
  };
}

function v1Event(extra: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'web.17b', namespace: 'default' },
    eventTime: '2025-03-01T11:59:00.000000Z',
    reportingController: 'svc.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
    note: 'Successfully assigned default/web to node-1',
    type: 'Normal',
    ...extra,
  };
}

test('core event: old-style events pass; namespaces must agree; type Normal or Warning', (t) => {
  t.deepEqual(coreType.validate!(coreEvent()), []);
  const mismatch = coreEvent({ involvedObject: { kind: 'Pod', namespace: 'other', name: 'web' } });
  t.deepEqual(coreType.validate!(mismatch).map((c) => [c.field, c.message]), [['involvedObject.namespace', 'Invalid value: "other": does not match event.namespace']]);
  t.deepEqual(fields(coreType.validate!(coreEvent({ type: 'Info' }))), ['type']);
});

test('core event: new-style (eventTime) events need the reporting fields', (t) => {
  const o = coreEvent({ eventTime: '2025-03-01T11:59:00.000000Z' });
  t.deepEqual(fields(coreType.validate!(o)), ['reportingComponent', 'reportingInstance', 'action']);
});

test('core event table: last seen, object, count, source', (t) => {
  t.deepEqual(cells(coreType, coreEvent()), {
    'Last Seen': '2m',
    Type: 'Normal',
    Reason: 'Pulled',
    Object: 'pod/web',
    Subobject: 'spec.containers{app}',
    Source: 'kubelet, node-1',
    Message: 'Successfully pulled image',
    'First Seen': '10m',
    Count: 4,
  });
  const series = coreEvent({ series: { count: 7, lastObservedTime: ago(30_000) }, count: 0 });
  t.is(cells(coreType, series)['Last Seen'], '30s');
  t.is(cells(coreType, series).Count, 7);
});

test('core event field selectors', (t) => {
  const o = coreEvent({ source: {}, reportingComponent: 'svc.io/controller' });
  const sel = coreType.fieldSelectors!;
  t.is(sel['involvedObject.kind'](o), 'Pod');
  t.is(sel['involvedObject.name'](o), 'web');
  t.is(sel['involvedObject.uid'](o), 'u1');
  t.is(sel['involvedObject.fieldPath'](o), 'spec.containers{app}');
  t.is(sel['involvedObject.resourceVersion'](o), '');
  t.is(sel.reason(o), 'Pulled');
  t.is(sel.type(o), 'Normal');
  t.is(sel.source(o), 'svc.io/controller');
  t.is(sel.reportingComponent(o), 'svc.io/controller');
});

test('events.svc.io/v1: a complete event passes', (t) => {
  t.deepEqual(v1Type.validate!(v1Event()), []);
  t.is(v1Type.group, 'events.svc.io');
});

test('events.svc.io/v1: create rules of spec 2.7', (t) => {
  const o = v1Event({ type: 'Info', action: '', reportingController: '', eventTime: undefined });
  const causes = v1Type.validate!(o);
  // Without eventTime the legacy namespace rule applies instead of the reporting-field checks.
  t.deepEqual(fields(causes), ['eventTime', 'type']);
  t.is(causes[1].message, 'Invalid value: "": has invalid value: Info');
  const missing = v1Type.validate!(v1Event({ action: '', reportingController: '', reportingInstance: '', reason: '' }));
  t.deepEqual(fields(missing), ['reportingController', 'reportingInstance', 'action', 'reason']);
});

test('events.svc.io/v1: deprecated fields may not be set on new events', (t) => {
  const o = v1Event({ deprecatedSource: { component: 'x' }, deprecatedFirstTimestamp: ago(0), deprecatedLastTimestamp: ago(0), deprecatedCount: 2 });
  const causes = v1Type.validate!(o);
  t.deepEqual(causes.map((c) => [c.field, c.message]), [
    ['deprecatedSource', 'Invalid value: "": needs to be unset'],
    ['deprecatedFirstTimestamp', 'Invalid value: "": needs to be unset'],
    ['deprecatedLastTimestamp', 'Invalid value: "": needs to be unset'],
    ['deprecatedCount', 'Invalid value: "": needs to be unset'],
  ]);
});

test('events.svc.io/v1: series count ≥ 2 with lastObservedTime', (t) => {
  t.deepEqual(fields(v1Type.validate!(v1Event({ series: { count: 1 } }))), ['series.count', 'series.lastObservedTime']);
  t.deepEqual(v1Type.validate!(v1Event({ series: { count: 2, lastObservedTime: ago(0) } })), []);
});

test('events.svc.io/v1: regarding namespace must fit the event namespace', (t) => {
  const o = v1Event({ regarding: { kind: 'Node', name: 'n1' } });
  o.metadata.namespace = 'team-a';
  t.deepEqual(fields(v1Type.validate!(o)), ['regarding.namespace']);
  o.metadata.namespace = 'default';
  t.deepEqual(v1Type.validate!(o), []);
});

test('events.svc.io/v1: only the series may change on update', (t) => {
  const old = v1Event();
  const next = v1Event({ series: { count: 2, lastObservedTime: ago(0) } });
  t.deepEqual(v1Type.validate!(next, old), []);
  t.deepEqual(v1Type.validateUpdate!(next, old), []);
  const changed = v1Event({ note: 'other', reason: 'Other' });
  t.deepEqual(fields(v1Type.validateUpdate!(changed, old)), ['reason', 'note']);
  t.is(v1Type.validateUpdate!(changed, old)[0].message, 'Invalid value: "Other": field is immutable');
});

test('events.svc.io/v1: table and field selectors', (t) => {
  const c = cells(v1Type, v1Event());
  t.is(c['Last Seen'], '60s');
  t.is(c.Object, 'pod/web');
  t.is(c.Source, 'svc.io/scheduler, scheduler-1');
  t.is(c.Message, 'Successfully assigned default/web to node-1');
  t.is(c.Count, 1);
  const sel = v1Type.fieldSelectors!;
  t.is(sel['regarding.name'](v1Event()), 'web');
  t.is(sel.reportingController(v1Event()), 'svc.io/scheduler');
});

test('conversion between the two Event APIs renames fields both ways', (t) => {
  const v1 = coreEventToV1(coreEvent());
  t.is(v1.apiVersion, 'events.svc.io/v1');
  t.deepEqual((v1.regarding as any).name, 'web');
  t.is(v1.note, 'Successfully pulled image ');
  t.is(v1.deprecatedCount, 4);
  t.false('involvedObject' in v1);
  const back = v1EventToCore(v1);
  t.deepEqual({ ...back, apiVersion: undefined, kind: undefined }, { ...coreEvent(), apiVersion: undefined, kind: undefined });
});

test('served as events/v1, an event written without eventTime has eventTime = firstTimestamp (events/v1 requires it), which is not stored back', (t) => {
  const v1 = coreEventToV1(coreEvent());
  t.is(v1.eventTime, new Date(Date.parse(coreEvent().firstTimestamp as string)).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'));
  t.false('eventTime' in v1EventToCore(v1));
  const set = coreEventToV1(coreEvent({ eventTime: '2025-03-01T11:59:00.123456Z' }));
  t.is(set.eventTime, '2025-03-01T11:59:00.123456Z', 'an eventTime of its own is kept');
  t.is(v1EventToCore(set).eventTime, '2025-03-01T11:59:00.123456Z');
});
