import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import { parseLabelSelector } from '../../../../apiserver/api/selectors';
import type { KList, KObject } from '../../../../apiserver/api/types';
import type { DeletionStrategy, ResourceType } from '../../../../apiserver/registry/resource-type';
import { configMapType } from '../../../../apiserver/registry/types/configmaps';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { StorageError } from '../../../../apiserver/storage/storage';
import { Deleter, type CollectionLister } from '../../../../apiserver/store/deleter';
import { objectKey } from '../../../../apiserver/store/keys';
import { ListReader, type ListQuery } from '../../../../apiserver/store/list-reader';
import { decodeStored, encodeStored } from '../../../../apiserver/store/stored-object';
import type { AdmissionAttributes } from '../../../../apiserver/store/write-admission';
import { ctx } from './fixture';

const NOW = Date.parse('2025-03-01T12:00:00Z');

/** A Deleter over a real SQLite store; `onAdmit` runs inside admission (to race a write against the delete). */
function setup(lister?: (reader: ListReader) => CollectionLister) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-deleter-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const reader = new ListReader(storage, { waitForRevision: () => Promise.resolve() }, 0);
  const admitted: AdmissionAttributes[] = [];
  const s = {
    storage,
    admitted,
    onAdmit: undefined as undefined | ((a: AdmissionAttributes) => Promise<void>),
    deleter: undefined as unknown as Deleter,
    async put(t: ResourceType, name: string, meta: Partial<KObject['metadata']> = {}, spec?: unknown): Promise<KObject> {
      const obj: KObject = { metadata: { name, namespace: 'ns', ...meta } };
      if (spec !== undefined) obj.spec = spec;
      return decodeStored(t, await storage.create(objectKey(t, 'ns', name), encodeStored(t, obj)));
    },
    async read(t: ResourceType, name: string): Promise<KObject | null> {
      const kv = await storage.get(objectKey(t, 'ns', name));
      return kv && decodeStored(t, kv);
    },
    async close() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  s.deleter = new Deleter({
    storage,
    admission: {
      async admit(a) {
        admitted.push(a);
        await s.onAdmit?.(a);
      },
    },
    lister: lister ? lister(reader) : reader,
    now: () => new Date(NOW),
  });
  return s;
}

/** A type that names no built-in kind, with the given deletion strategy: the Deleter follows the hooks, not names. */
function widgets(deletion?: DeletionStrategy): ResourceType {
  return { ...configMapType, resource: 'widgets', kind: 'Widget', listKind: 'WidgetList', deletion };
}

const all = (over: Partial<ListQuery> = {}): ListQuery => ({ labelSelector: [], fieldSelector: [], ...over });

test('without a strategy an object with no finalizers goes at once, answering its last state', async (t) => {
  const s = setup();
  const w = widgets();
  const put = await s.put(w, 'a');
  const r = await s.deleter.delete(w, 'ns', 'a', {}, ctx());
  t.true(r.gone);
  t.is(r.object.metadata.uid, put.metadata.uid);
  t.is(r.object.metadata.resourceVersion, String(await s.storage.currentRevision()));
  t.is(await s.read(w, 'a'), null);
  t.like(s.admitted[0], { operation: 'DELETE', name: 'a', namespace: 'ns', object: undefined });
  t.is(s.admitted[0].oldObject?.metadata.uid, put.metadata.uid);
  await s.close();
});

test('the strategy gives the default grace period, can hold deletion and marks the terminating object', async (t) => {
  const s = setup();
  const held = new Set(['a']);
  const w = widgets({
    defaultGracePeriodSeconds: (o) => (o.metadata.name === 'slow' ? 7 : 0),
    holdsDeletion: (o) => held.has(o.metadata.name!),
    markTerminating: (o) => void ((o.metadata.annotations ??= {}).terminating = 'yes'),
  });
  await s.put(w, 'slow');
  const slow = await s.deleter.delete(w, 'ns', 'slow', {}, ctx());
  t.false(slow.gone);
  t.is(slow.object.metadata.deletionTimestamp, '2025-03-01T12:00:07Z');
  t.is(slow.object.metadata.deletionGracePeriodSeconds, 7);
  t.deepEqual(slow.object.metadata.annotations, { terminating: 'yes' });
  // An explicit grace period wins over the strategy's.
  t.true((await s.deleter.delete(w, 'ns', 'slow', { gracePeriodSeconds: 0 }, ctx())).gone);

  await s.put(w, 'a');
  const a = await s.deleter.delete(w, 'ns', 'a', { gracePeriodSeconds: 0 }, ctx());
  t.false(a.gone, 'held by the strategy');
  t.is(a.object.metadata.deletionTimestamp, '2025-03-01T12:00:00Z');
  const again = await s.deleter.delete(w, 'ns', 'a', {}, ctx());
  t.is(again.object.metadata.resourceVersion, a.object.metadata.resourceVersion, 'a repeated delete that changes nothing writes nothing');
  held.delete('a');
  t.true((await s.deleter.delete(w, 'ns', 'a', {}, ctx())).gone);
  await s.close();
});

test('deleteIfFinalized removes a terminating object without finalizers unless the strategy says no', async (t) => {
  const s = setup();
  const plain = widgets();
  const kept = widgets({ deleteWhenFinalized: () => false });
  const terminating = { deletionTimestamp: '2025-03-01T12:00:00Z', finalizers: ['example.com/x'] };
  for (const [t2, name] of [
    [plain, 'p'],
    [kept, 'k'],
  ] as const) {
    const cur = await s.put(t2, name, terminating);
    const next = { ...cur, metadata: { ...cur.metadata, finalizers: [] as string[] } };
    const out = await s.deleter.deleteIfFinalized(t2, objectKey(t2, 'ns', name), next, Number(cur.metadata.resourceVersion));
    if (t2 === plain) {
      t.is(out?.metadata.resourceVersion, String(await s.storage.currentRevision()));
      t.is(await s.read(t2, name), null);
    } else {
      t.is(out, undefined);
      t.truthy(await s.read(t2, name));
    }
  }
  // Not terminating, or a finalizer left: nothing happens.
  const live = await s.put(plain, 'live');
  t.is(await s.deleter.deleteIfFinalized(plain, objectKey(plain, 'ns', 'live'), live, Number(live.metadata.resourceVersion)), undefined);
  t.truthy(await s.read(plain, 'live'));
  await s.close();
});

test('a write racing the delete makes it read again and decide on the latest object', async (t) => {
  const s = setup();
  const w = widgets();
  await s.put(w, 'a');
  s.onAdmit = async (a) => {
    if (s.admitted.length > 1) return;
    // Someone adds a finalizer between the delete's read and its write.
    const kv = (await s.storage.get(objectKey(w, 'ns', 'a')))!;
    const o = decodeStored(w, kv);
    o.metadata.finalizers = ['example.com/late'];
    await s.storage.update(kv.key, encodeStored(w, o), kv.modRevision);
    t.is(a.oldObject?.metadata.finalizers, undefined);
  };
  const r = await s.deleter.delete(w, 'ns', 'a', {}, ctx());
  t.is(s.admitted.length, 2);
  t.false(r.gone, 'the finalizer added meanwhile now holds it');
  t.deepEqual(r.object.metadata.finalizers, ['example.com/late']);
  await s.close();
});

test('an object removed while a graceful delete is under way is a 404, not a 500 (kubectl deleting a pod its namespace controller removes)', async (t) => {
  const s = setup();
  const w = widgets({ defaultGracePeriodSeconds: () => 30 });
  await s.put(w, 'a');
  s.onAdmit = async () => {
    // The object goes between the delete's read and its write (it would have been kept terminating).
    await s.storage.delete(objectKey(w, 'ns', 'a'));
  };
  const err = await t.throwsAsync(s.deleter.delete(w, 'ns', 'a', {}, ctx()), { instanceOf: ApiError });
  t.like(err, { code: 404, reason: 'NotFound' });
  await s.close();
});

test('a delete that keeps losing the race gives up after nine attempts', async (t) => {
  const s = setup();
  const w = widgets();
  await s.put(w, 'a');
  s.onAdmit = async () => {
    const kv = (await s.storage.get(objectKey(w, 'ns', 'a')))!;
    await s.storage.update(kv.key, kv.value, kv.modRevision);
  };
  const err = await t.throwsAsync(s.deleter.delete(w, 'ns', 'a', {}, ctx()), { instanceOf: StorageError });
  t.is(err?.code, 'Conflict');
  t.is(s.admitted.length, 9);
  t.truthy(await s.read(w, 'a'));
  await s.close();
});

test('a dry-run delete of a held object answers it terminating and writes nothing', async (t) => {
  const s = setup();
  const w = widgets();
  const put = await s.put(w, 'a', { finalizers: ['example.com/x'] });
  const r = await s.deleter.delete(w, 'ns', 'a', { propagationPolicy: 'Foreground' }, ctx({ dryRun: true }));
  t.false(r.gone);
  t.deepEqual(r.object.metadata.finalizers, ['example.com/x', 'foregroundDeletion']);
  t.truthy(r.object.metadata.deletionTimestamp);
  t.deepEqual(await s.read(w, 'a'), put);
  await s.close();
});

test('deleteCollection deletes what the query matches, skips what is already gone and answers what it deleted', async (t) => {
  // The lister also reports an object nobody stored, as if it went between the list and its delete.
  const s = setup((reader) => ({
    async list(t2, ns, q): Promise<KList> {
      const l = await reader.list(t2, ns, q);
      return { ...l, items: [...l.items, { metadata: { name: 'ghost', namespace: 'ns' } }] };
    },
  }));
  const w = widgets();
  await s.put(w, 'a', { labels: { app: 'x' } });
  await s.put(w, 'b', { labels: { app: 'x' }, finalizers: ['example.com/x'] });
  await s.put(w, 'c', { labels: { app: 'y' } });
  const rv = await s.storage.currentRevision();
  const out = await s.deleter.deleteCollection(w, 'ns', all({ labelSelector: parseLabelSelector('app=x'), limit: 1 }), {}, ctx());
  t.is(out.kind, 'WidgetList');
  t.is(out.metadata.resourceVersion, String(rv));
  t.deepEqual(out.items.map((o) => [o.metadata.name, Boolean(o.metadata.deletionTimestamp)]), [
    ['a', false],
    ['b', true],
  ]);
  t.is(await s.read(w, 'a'), null);
  t.truthy((await s.read(w, 'b'))?.metadata.deletionTimestamp);
  t.truthy(await s.read(w, 'c'));
  await s.close();
});

test('remove ignores a missing object and refuses a stale resourceVersion with 409', async (t) => {
  const s = setup();
  const w = widgets();
  await s.deleter.remove(w, 'ns', 'none');
  const put = await s.put(w, 'a', { finalizers: ['example.com/x'] });
  const kv = (await s.storage.get(objectKey(w, 'ns', 'a')))!;
  await s.storage.update(kv.key, kv.value, kv.modRevision);
  const err = await t.throwsAsync(s.deleter.remove(w, 'ns', 'a', put.metadata.resourceVersion), { instanceOf: ApiError });
  t.is(err?.code, 409);
  await s.deleter.remove(w, 'ns', 'a');
  t.is(await s.read(w, 'a'), null, 'remove ignores finalizers');
  await s.close();
});

test('a default grace period beyond what a deadline can hold is bounded, not an invalid date (500)', async (t) => {
  const s = setup();
  // A pod may store any safe-integer terminationGracePeriodSeconds; its deadline must still be a date.
  const w = widgets({ defaultGracePeriodSeconds: (o) => (o.metadata.name === 'long' ? Number.MAX_SAFE_INTEGER : -Number.MAX_SAFE_INTEGER) });
  await s.put(w, 'long');
  const long = await s.deleter.delete(w, 'ns', 'long', {}, ctx());
  t.false(long.gone);
  t.is(long.object.metadata.deletionGracePeriodSeconds, 9_223_372_036);
  t.is(long.object.metadata.deletionTimestamp, new Date(NOW + 9_223_372_036_000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  await s.put(w, 'past', { finalizers: ['example.com/hold'] });
  const past = await s.deleter.delete(w, 'ns', 'past', {}, ctx());
  t.false(past.gone, 'held by its finalizer');
  t.is(past.object.metadata.deletionGracePeriodSeconds, -9_223_372_036);
  await s.close();
});
