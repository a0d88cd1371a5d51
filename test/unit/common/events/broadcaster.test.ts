import test from 'ava';
import { EventBroadcaster, type DropReason, type EventBroadcasterOptions } from '../../../../common/events/broadcaster';
import type { CoreEvent, EventPatch } from '../../../../common/events/core-event';
import { EventSinkError, type EventSink } from '../../../../common/events/event-sink';
import type { EventObjectRef } from '../../../../common/events/recorder';
import { NOOP_RECORDER } from '../../../../common/events/recorder';
import { FakeClock, flush } from '../../../helpers/fake-clock';

const pod: EventObjectRef = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'web', uid: 'u1' };
const node: EventObjectRef = { kind: 'Node', name: 'node-a', uid: 'node-a' };
const quiet = { warn: () => undefined, debug: () => undefined };

/** An in-memory API: events by namespace/name, with scripted failures. */
class MemorySink implements EventSink {
  readonly events = new Map<string, CoreEvent>();
  readonly calls: string[] = [];
  private rv = 0;
  /** Errors thrown by the next calls, in order. */
  failures: Error[] = [];

  create(e: CoreEvent): Promise<CoreEvent> {
    this.calls.push(`create ${e.metadata.name}`);
    return this.answer(() => {
      const key = `${e.metadata.namespace}/${e.metadata.name}`;
      if (this.events.has(key)) throw new EventSinkError('rejected', 'already exists');
      const s = { ...e, metadata: { ...e.metadata, resourceVersion: String(++this.rv) } };
      this.events.set(key, s);
      return s;
    });
  }

  patch(namespace: string, name: string, p: EventPatch): Promise<CoreEvent> {
    this.calls.push(`patch ${name} ${p.count}`);
    return this.answer(() => {
      const key = `${namespace}/${name}`;
      const cur = this.events.get(key);
      if (!cur) throw new EventSinkError('notFound', 'not found');
      const s = { ...cur, ...p, metadata: { ...cur.metadata, resourceVersion: String(++this.rv) } };
      this.events.set(key, s);
      return s;
    });
  }

  /** The next scripted failure, else fn's answer, as a promise. */
  private answer(fn: () => CoreEvent): Promise<CoreEvent> {
    const f = this.failures.shift();
    if (f) return Promise.reject(f instanceof Error ? f : new Error(String(f)));
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

function setup(o: { maxQueued?: number; log?: EventBroadcasterOptions['log'] } = {}) {
  const clock = new FakeClock();
  const sink = new MemorySink();
  const dropped: DropReason[] = [];
  const b = new EventBroadcaster(sink, { clock, log: quiet, random: () => 0.5, onDropped: (r) => dropped.push(r), ...o });
  const ac = new AbortController();
  return { clock, sink, dropped, b, ac, start: () => void b.run(ac.signal) };
}

test('events carry the recorder\'s identity: source, reportingComponent and reportingInstance; the namespace of a cluster-scoped object is default', async (t) => {
  const { sink, b, ac, start } = setup();
  b.recorder({ component: 'kubelet', host: 'node-a' }).event(node, 'Normal', 'NodeReady', 'Node node-a status is now: NodeReady');
  b.recorder({ component: 'default-scheduler' }).event(pod, 'Normal', 'Scheduled', 'Successfully assigned ns/web to node-a', { action: 'Binding', related: node });
  start();
  await b.idle();
  ac.abort();
  const [n, p] = [...sink.events.values()];
  t.is(n.metadata.namespace, 'default');
  t.deepEqual(n.source, { component: 'kubelet', host: 'node-a' });
  t.is(n.reportingComponent, 'kubelet');
  t.is(n.reportingInstance, 'node-a');
  t.deepEqual(n.involvedObject, node);
  t.regex(n.metadata.name, /^node-a\.[0-9a-f]+$/);
  t.is(p.metadata.namespace, 'ns');
  t.deepEqual(p.source, { component: 'default-scheduler' });
  t.is(p.action, 'Binding');
  t.deepEqual(p.related, node);
  t.is(p.count, 1);
  t.is(p.firstTimestamp, '2025-01-01T00:00:00Z');
});

test('a repeat patches the stored event; a patch of a deleted event creates it again', async (t) => {
  const { clock, sink, b, ac, start } = setup();
  const r = b.recorder({ component: 'kubelet', host: 'node-a' });
  start();
  r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_ns(u1)');
  await b.idle();
  await clock.advance(10_000);
  r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_ns(u1)');
  await b.idle();
  t.is(sink.events.size, 1);
  const [e] = sink.events.values();
  t.is(e.count, 2);
  t.is(e.lastTimestamp, '2025-01-01T00:00:10Z');
  t.is(e.firstTimestamp, '2025-01-01T00:00:00Z');
  sink.events.clear(); // the TTL removed it
  r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_ns(u1)');
  await b.idle();
  ac.abort();
  t.is(sink.events.size, 1);
  t.is([...sink.events.values()][0].count, 3);
  t.deepEqual(sink.calls.map((c) => c.split(' ')[0]), ['create', 'patch', 'patch', 'create']);
});

test('an unreachable API is retried after a randomised then a fixed delay, up to 12 tries; a rejection is dropped at once', async (t) => {
  const { clock, sink, dropped, b, ac, start } = setup();
  const r = b.recorder({ component: 'node-controller' });
  start();
  sink.failures = [new Error('ECONNREFUSED'), new Error('ECONNREFUSED')];
  r.event(node, 'Normal', 'RegisteredNode', 'Registered Node node-a in Controller');
  await flush();
  t.deepEqual(clock.delays(), [5000], 'first retry: 10 s × random');
  await clock.advance(5000);
  t.deepEqual(clock.delays(), [10_000]);
  await clock.advance(10_000);
  await b.idle();
  t.is(sink.events.size, 1);
  sink.failures = [new EventSinkError('rejected', 'namespace is terminating')];
  r.event(pod, 'Normal', 'X', 'y');
  await b.idle();
  t.deepEqual(dropped, ['Rejected']);
  sink.failures = Array.from({ length: 12 }, () => new Error('down'));
  const before = sink.calls.length;
  r.event(pod, 'Normal', 'Z', 'z');
  t.true(await clock.advanceUntil(() => dropped.length === 2, 200_000, 1000));
  t.deepEqual(dropped, ['Rejected', 'RetriesExhausted']);
  t.is(sink.calls.length - before, 12, 'twelve attempts, then given up');
  t.is(sink.events.size, 1);
  ac.abort();
});

test('never blocks: a full queue drops the newest event and counts it, with one warning per burst; invalid types are not recorded; recording never throws', async (t) => {
  const warnings: string[] = [];
  const { sink, dropped, b, ac, start } = setup({ maxQueued: 3, log: { warn: (_o, msg) => void warnings.push(msg), debug: () => {} } });
  const r = b.recorder({ component: 'kubelet', host: 'n' });
  for (let i = 0; i < 5; i++) r.event(pod, 'Normal', 'Pulled', `m${i}`);
  t.is(b.queued, 3);
  t.deepEqual(dropped, ['QueueFull', 'QueueFull']);
  t.deepEqual(warnings, ['too many queued events; dropping events until the queue has room']);
  (r.event as (...a: unknown[]) => void)(pod, 'Fatal', 'X', 'y');
  t.notThrows(() => r.event(null as unknown as EventObjectRef, 'Normal', 'X', 'y'));
  start();
  await b.idle();
  ac.abort();
  t.deepEqual([...sink.events.values()].map((e) => e.message), ['m0', 'm1', 'm2']);
  r.event(pod, 'Normal', 'Pulled', 'after');
  t.is(warnings.at(-1), 'the event queue has room again; 2 events were dropped while it was full');
  t.notThrows(() => NOOP_RECORDER.event(pod, 'Normal', 'X', 'y'));
});
