import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { EventTtlController, lastWriteMs } from '../../../../apiserver/controllers/event-ttl';
import { StoreInformers } from '../../../../apiserver/store/list-watch';
import { FakeClock } from '../../../helpers/fake-clock';
import { adminCtx, openFixture, type Fixture } from './store-fixture';

const TTL = 3600_000;

function event(name: string): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', namespace: 'ns', name: 'web' },
    reason: 'Pulled',
    message: 'm',
    count: 1,
    type: 'Normal',
  };
}

/** The fixture with one fake time for the store's stamps and the controller's timers. */
async function setup(t: { teardown(fn: () => unknown): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  const clock = new FakeClock(f.clock.ms);
  const advance = async (ms: number) => {
    f.clock.advance(ms);
    await clock.advance(ms);
  };
  const core = f.type('', 'v1', 'events');
  return { f, clock, advance, core };
}

function start(f: Fixture, clock: FakeClock): AbortController {
  const ac = new AbortController();
  f.signal.addEventListener('abort', () => ac.abort(), { once: true });
  const informers = new StoreInformers(f.store, f.cache, { log: f.log, clock });
  void new EventTtlController(f.store, f.cache, f.registry, { ttlMs: TTL, log: f.log, clock, informers }).run(ac.signal);
  return ac;
}

async function exists(f: Fixture, name: string): Promise<boolean> {
  return (await f.store.get(f.type('', 'v1', 'events'), 'ns', name).catch(() => null)) !== null;
}

/** Waits (bounded by count) until the event is gone or not; the store write after a timer is asynchronous. */
async function until(f: Fixture, name: string, present: boolean): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    if ((await exists(f, name)) === present) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

test('the last write is the creation or the latest managedFields time, never the event\'s own timestamps', (t) => {
  const o = { metadata: { creationTimestamp: '2025-03-01T12:00:00Z', managedFields: [{ manager: 'a', time: '2025-03-01T12:30:00Z' }, { manager: 'b', time: '2025-03-01T12:10:00Z' }] }, lastTimestamp: '2030-01-01T00:00:00Z' } as KObject;
  t.is(lastWriteMs(o), Date.parse('2025-03-01T12:30:00Z'));
  t.is(lastWriteMs({ metadata: { creationTimestamp: '2025-03-01T12:00:00Z' } }), Date.parse('2025-03-01T12:00:00Z'));
});

test('an event is removed once the TTL has passed since its last write; a write pushes its end back', async (t) => {
  const { f, clock, advance, core } = await setup(t);
  await f.store.create(core, 'ns', event('a'), adminCtx);
  await f.store.create(core, 'ns', event('b'), adminCtx);
  start(f, clock);
  await advance(30 * 60_000);
  await f.store.update(core, 'ns', 'b', (c) => ({ ...c!, count: 2 }), adminCtx);
  await advance(TTL - 30 * 60_000 - 1);
  t.true(await exists(f, 'a'), 'alive until its TTL');
  await advance(1);
  t.true(await until(f, 'a', false), 'removed at its TTL');
  t.true(await exists(f, 'b'), 'written again after 30 min: lives on');
  await advance(30 * 60_000 - 1);
  t.true(await exists(f, 'b'));
  await advance(1);
  t.true(await until(f, 'b', false));
});

test('events written through events.svc.io/v1 expire too (one storage)', async (t) => {
  const { f, clock, advance } = await setup(t);
  const v1 = f.type('events.svc.io', 'v1', 'events');
  await f.store.create(
    v1,
    'ns',
    { apiVersion: 'events.svc.io/v1', kind: 'Event', metadata: { name: 'x' }, eventTime: '2025-03-01T12:00:00.000000Z', regarding: { kind: 'Pod', namespace: 'ns', name: 'web' }, reason: 'R', action: 'A', type: 'Normal', reportingController: 'c', reportingInstance: 'i' },
    adminCtx,
  );
  start(f, clock);
  await advance(TTL);
  t.true(await until(f, 'x', false));
});

test('restarted after its events\' time passed (a kill, a new leader), it removes them at once and keeps the others to their time', async (t) => {
  const { f, clock, advance, core } = await setup(t);
  const first = start(f, clock);
  await f.store.create(core, 'ns', event('old'), adminCtx);
  await advance(20 * 60_000);
  first.abort(); // killed: its timers are gone
  await f.store.create(core, 'ns', event('young'), adminCtx);
  await advance(TTL - 10 * 60_000); // nothing runs meanwhile
  t.true(await exists(f, 'old'), 'no loop ran while it was down');
  start(f, clock);
  await advance(0);
  t.true(await until(f, 'old', false), 'expired while down: removed on start');
  t.true(await exists(f, 'young'));
  await advance(10 * 60_000);
  t.true(await until(f, 'young', false));
});
