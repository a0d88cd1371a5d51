import test from 'ava';
import pino from 'pino';
import { moveViewObjects } from '../../../../apiserver/store/view-migration';
import { openStore } from './fixture';

/** An events.svc.io/v1 Event as svc stored it under its own keys before the two Event APIs shared core/v1's storage. */
const oldEvent = (name: string) => ({
  apiVersion: 'events.svc.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default', uid: `u-${name}`, creationTimestamp: '2025-03-01T12:00:00Z' },
  eventTime: '2025-03-01T12:00:00.000000Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Sync',
  reason: 'Synced',
  note: 'synced the thing',
  type: 'Normal',
  regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
});

test('events stored under events.svc.io keys by an older svc move to the shared storage, readable through both APIs; again is a no-op', async (t) => {
  const f = await openStore();
  t.teardown(() => f.close());
  const { storage } = f;
  for (const n of ['a', 'b']) await storage.create(`/events.svc.io/events/default/${n}`, Buffer.from(JSON.stringify(oldEvent(n))));
  const log = pino({ level: 'silent' });
  t.is(await moveViewObjects(storage, f.registry.all(), log), 2);
  t.is((await storage.list('/events.svc.io/events/')).items.length, 0);
  const core = await f.store.get(f.type('events'), 'default', 'a');
  t.like(core, { message: 'synced the thing', reason: 'Synced', involvedObject: { kind: 'Pod', name: 'web' }, metadata: { uid: 'u-a' } });
  const v1 = await f.store.get(f.type('events', 'events.svc.io', 'v1'), 'default', 'b');
  t.like(v1, { note: 'synced the thing', reportingController: 'example.com/ctl', regarding: { kind: 'Pod', name: 'web' } });
  t.is(await moveViewObjects(storage, f.registry.all(), log), 0);
});
