/**
 * The two Event APIs over one storage at the HTTP edge: a watch through events.svc.io/v1 streams
 * core-written events in its own form (never the cached stored rendering), and protobuf reads of
 * one stored version through both APIs each get their own message (the encoded-version cache is
 * not shared between a view and its storage type).
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { decodeObject } from '../../../../apiserver/codec/envelope';
import { handleGet } from '../../../../apiserver/handlers/get';
import { handleWatch } from '../../../../apiserver/handlers/watch';
import { coreEventSchema } from '../../../../apiserver/registry/types/events';
import { eventV1Schema } from '../../../../apiserver/registry/types/events-v1';
import { admin, withStore } from '../store/fixture';
import { call, start } from './fake-http';

const PB = { accept: 'application/vnd.kubernetes.protobuf, application/json' };

function coreEvent(name: string): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1' },
    reason: 'Started',
    message: 'Started container app',
    source: { component: 'kubelet', host: 'node-a' },
    count: 1,
    type: 'Normal',
  };
}

test('a watch of events.svc.io/v1 streams events written through core/v1 in the events/v1 form', (t) =>
  withStore(async (f) => {
    const core = f.type('events');
    await f.store.create(core, 'default', coreEvent('a'), admin);
    const ac = new AbortController();
    const w = start(f, handleWatch, 'GET', '/apis/events.svc.io/v1/namespaces/default/events?watch=1', { signal: ac.signal });
    await w.res.waitForLines(1);
    await f.store.update(core, 'default', 'a', (c) => ({ ...c!, count: 2 }), admin);
    await w.res.waitForLines(2);
    const [added, modified] = w.res.lines() as Array<{ type: string; object: KObject }>;
    t.is(added.type, 'ADDED');
    t.is(modified.type, 'MODIFIED');
    for (const l of [added, modified]) {
      t.is(l.object.apiVersion, 'events.svc.io/v1');
      t.is(l.object.note, 'Started container app');
      t.false('message' in l.object);
    }
    t.is(modified.object.deprecatedCount, 2);
    ac.abort();
    await w.done;
  }));

test('protobuf gets of one stored event through both APIs answer each API\'s message', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('events'), 'default', coreEvent('a'), admin);
    for (let round = 0; round < 2; round++) {
      const c = await call(f, handleGet, 'GET', '/api/v1/namespaces/default/events/a', { headers: PB });
      const v = await call(f, handleGet, 'GET', '/apis/events.svc.io/v1/namespaces/default/events/a', { headers: PB });
      t.is(decodeObject(coreEventSchema, c.bytes).message, 'Started container app', `core, round ${round}`);
      t.is(decodeObject(eventV1Schema, v.bytes).note, 'Started container app', `events/v1, round ${round}`);
    }
  }));
