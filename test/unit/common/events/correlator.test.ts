import test from 'ava';
import { makeEvent } from '../../../../common/events/broadcaster';
import { AGGREGATE_INTERVAL_MS, EventCorrelator, SPAM_BURST } from '../../../../common/events/correlator';
import type { CoreEvent } from '../../../../common/events/core-event';
import type { EventObjectRef } from '../../../../common/events/recorder';

const pod: EventObjectRef = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'web', uid: 'u1' };
const kubelet = { component: 'kubelet', host: 'node-a' };

function clock(start = Date.UTC(2025, 0, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function ev(now: number, reason = 'BackOff', message = 'Back-off pulling image "x"', ref = pod): CoreEvent {
  return makeEvent(kubelet, ref, 'Normal', reason, message, now);
}

/** What the server would answer: the event with a resourceVersion. */
function stored(e: CoreEvent, rv: number): CoreEvent {
  return { ...e, metadata: { ...e.metadata, resourceVersion: String(rv) } };
}

test('an identical repeat becomes a patch of the first event: same name, count + 1, first timestamp kept', (t) => {
  const c = clock();
  const k = new EventCorrelator({ now: c.now });
  const first = k.correlate(ev(c.now()));
  if (first.skip) return t.fail('first event skipped');
  t.is(first.patch, undefined, 'a new event is created');
  t.is(first.event.count, 1);
  k.updateState(stored(first.event, 7));
  c.advance(30_000);
  const second = k.correlate(ev(c.now()));
  if (second.skip) return t.fail('repeat skipped');
  t.is(second.event.metadata.name, first.event.metadata.name);
  t.is(second.event.metadata.resourceVersion, '7');
  t.is(second.event.firstTimestamp, first.event.firstTimestamp);
  t.deepEqual(second.patch, { count: 2, lastTimestamp: '2025-01-01T00:00:30Z', message: 'Back-off pulling image "x"' });
  c.advance(1000);
  const third = k.correlate(ev(c.now()));
  t.false(third.skip);
  if (!third.skip) t.is(third.patch?.count, 3, 'counts on without waiting for the server');
});

test('events that differ in message, reason, object or fieldPath are not merged', (t) => {
  const c = clock();
  const k = new EventCorrelator({ now: c.now });
  const a = k.correlate(ev(c.now(), 'Pulling', 'Pulling image "a"'));
  const b = k.correlate(ev(c.now(), 'Pulling', 'Pulling image "b"'));
  const d = k.correlate(ev(c.now(), 'Pulled', 'Pulling image "a"'));
  const e = k.correlate(ev(c.now(), 'Pulling', 'Pulling image "a"', { ...pod, fieldPath: 'spec.containers{c}' }));
  for (const r of [a, b, d, e]) {
    t.false(r.skip);
    if (!r.skip) t.is(r.patch, undefined);
  }
});

test('the tenth distinct message of one reason about one object within ten minutes starts a combined event, which later ones count on', (t) => {
  const c = clock();
  const k = new EventCorrelator({ now: c.now });
  for (let i = 0; i < 9; i++) {
    const r = k.correlate(ev(c.now(), 'Unhealthy', `Readiness probe failed: ${i}`));
    if (r.skip || r.patch) return t.fail(`event ${i} was not written as itself`);
    t.is(r.event.message, `Readiness probe failed: ${i}`);
  }
  const tenth = k.correlate(ev(c.now(), 'Unhealthy', 'Readiness probe failed: 9'));
  if (tenth.skip) return t.fail('skipped');
  t.is(tenth.event.message, '(combined from similar events): Readiness probe failed: 9');
  t.is(tenth.event.count, 1);
  t.is(tenth.patch, undefined);
  const eleventh = k.correlate(ev(c.now(), 'Unhealthy', 'Readiness probe failed: 10'));
  if (eleventh.skip) return t.fail('skipped');
  t.is(eleventh.event.metadata.name, tenth.event.metadata.name);
  t.deepEqual(eleventh.patch, { count: 2, lastTimestamp: tenth.event.lastTimestamp, message: '(combined from similar events): Readiness probe failed: 10' });
});

test('a group of similar events older than the interval starts afresh', (t) => {
  const c = clock();
  const k = new EventCorrelator({ now: c.now });
  for (let i = 0; i < 9; i++) k.correlate(ev(c.now(), 'Unhealthy', `m${i}`));
  c.advance(AGGREGATE_INTERVAL_MS + 1);
  const r = k.correlate(ev(c.now(), 'Unhealthy', 'm9'));
  if (r.skip) return t.fail('skipped');
  t.is(r.event.message, 'm9', 'not combined: the earlier nine have aged out');
});

test('spam filter: a source may burst 25 events about an object, then one every 5 minutes; other objects are not affected', (t) => {
  const c = clock();
  const k = new EventCorrelator({ now: c.now });
  let written = 0;
  for (let i = 0; i < SPAM_BURST + 5; i++) if (!k.correlate(ev(c.now(), 'Started', 'Started container c')).skip) written++;
  t.is(written, SPAM_BURST, 'repeats spend tokens too (upstream filters after counting)');
  t.false(k.correlate(ev(c.now(), 'Started', 'x', { ...pod, name: 'other', uid: 'u2' })).skip, 'another object has its own bucket');
  c.advance(299_000);
  t.true(k.correlate(ev(c.now(), 'Started', 'Started container c')).skip, 'not yet refilled');
  c.advance(1_000);
  t.false(k.correlate(ev(c.now(), 'Started', 'Started container c')).skip, 'one token after 5 minutes');
  t.true(k.correlate(ev(c.now(), 'Started', 'Started container c')).skip);
  const other = makeEvent({ component: 'default-scheduler' }, pod, 'Normal', 'Scheduled', 'm', c.now());
  t.false(k.correlate(other).skip, 'another source has its own bucket for the same object');
});
