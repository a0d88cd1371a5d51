import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../../../apiserver/api/errors';
import { parseFieldSelector, parseLabelSelector } from '../../../../apiserver/api/selectors';
import { configMapType } from '../../../../apiserver/registry/types/configmaps';
import { podType } from '../../../../apiserver/registry/types/pods';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { objectKey } from '../../../../apiserver/store/keys';
import { fieldValue, ListReader, selectableFields, type ListQuery } from '../../../../apiserver/store/list-reader';

/** A ListReader over a real SQLite store; waits for revisions are recorded and answered at once. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-list-'));
  const storage = SqliteStorage.open(join(dir, 'db'), { synchronous: 'NORMAL' });
  const waits: Array<[number, number]> = [];
  const reader = new ListReader(storage, {
    waitForRevision: (rev, ms) => {
      waits.push([rev, ms]);
      return Promise.resolve();
    },
  }, 1234);
  return {
    storage,
    reader,
    waits,
    /** Stores a configmap in namespace ns directly (as ObjectStore would encode it). */
    put: (ns: string, name: string, labels: Record<string, string> = {}) =>
      storage.create(objectKey(configMapType, ns, name), Buffer.from(JSON.stringify({ metadata: { name, namespace: ns, labels } }))),
    async close() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const q = (over: Partial<ListQuery> = {}): ListQuery => ({ labelSelector: [], fieldSelector: [], ...over });
const names = (l: { items: Array<{ metadata: { name?: string } }> }) => l.items.map((o) => o.metadata.name);

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

test('lists one namespace or all, in key order, with the list kind and the read revision', async (t) => {
  const s = setup();
  await s.put('a', 'x');
  await s.put('a', 'y');
  const last = await s.put('b', 'z');
  const inA = await s.reader.list(configMapType, 'a', q());
  t.deepEqual(names(inA), ['x', 'y']);
  t.like(inA, { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: String(last.modRevision) } });
  t.deepEqual(inA.items[0].metadata.resourceVersion, String(last.modRevision - 2));
  t.is(inA.items[0].kind, 'ConfigMap');
  t.deepEqual(names(await s.reader.list(configMapType, '', q())), ['x', 'y', 'z']);
  t.is(inA.metadata.continue, undefined);
  await s.close();
});

test('chunks: limit gives a continue token and remainingItemCount; the token reads on at the same revision', async (t) => {
  const s = setup();
  for (const n of ['a', 'b', 'c', 'd', 'e']) await s.put('ns', n);
  const first = await s.reader.list(configMapType, 'ns', q({ limit: 2 }));
  t.deepEqual(names(first), ['a', 'b']);
  t.is(first.metadata.remainingItemCount, 3);
  t.truthy(first.metadata.continue);
  await s.put('ns', 'bb'); // written after the first chunk: not in this list
  const second = await s.reader.list(configMapType, 'ns', q({ limit: 2, continue: first.metadata.continue }));
  t.deepEqual(names(second), ['c', 'd']);
  t.is(second.metadata.resourceVersion, first.metadata.resourceVersion);
  const third = await s.reader.list(configMapType, 'ns', q({ limit: 2, continue: second.metadata.continue }));
  t.deepEqual(names(third), ['e']);
  t.is(third.metadata.continue, undefined);
  t.is(third.metadata.remainingItemCount, undefined);
  await s.close();
});

test('selectors keep reading pages until the limit is filled, and omit remainingItemCount', async (t) => {
  const s = setup();
  // 150 objects, three labelled: a selective list with limit 2 must read past the first page of 100.
  const picked = new Set([10, 120, 140]);
  for (let i = 0; i < 150; i++) await s.put('ns', `o${String(i).padStart(3, '0')}`, picked.has(i) ? { pick: 'yes' } : {});
  const l = await s.reader.list(configMapType, 'ns', q({ limit: 2, labelSelector: parseLabelSelector('pick=yes') }));
  t.deepEqual(names(l), ['o010', 'o120']);
  t.truthy(l.metadata.continue);
  t.is(l.metadata.remainingItemCount, undefined);
  const rest = await s.reader.list(configMapType, 'ns', q({ limit: 2, labelSelector: parseLabelSelector('pick=yes'), continue: l.metadata.continue }));
  t.deepEqual(names(rest), ['o140']);
  t.is(rest.metadata.continue, undefined);
  const byName = await s.reader.list(configMapType, 'ns', q({ fieldSelector: parseFieldSelector('metadata.name=o007', selectableFields(configMapType)) }));
  t.deepEqual(names(byName), ['o007']);
  await s.close();
});

test('an exact resourceVersion reads the past; a compacted one is 410, worded for a continue token when it is one', async (t) => {
  const s = setup();
  const a = await s.put('ns', 'a');
  await s.put('ns', 'b');
  await s.put('ns', 'c');
  const then = await s.reader.list(configMapType, 'ns', q({ resourceVersion: String(a.modRevision), resourceVersionMatch: 'Exact' }));
  t.deepEqual(names(then), ['a']);
  const chunk = await s.reader.list(configMapType, 'ns', q({ limit: 1 }));
  await s.put('ns', 'd');
  await s.storage.compact(await s.storage.currentRevision());
  const old = await rejection(s.reader.list(configMapType, 'ns', q({ resourceVersion: String(a.modRevision), resourceVersionMatch: 'Exact' })));
  t.is(old.code, 410);
  t.is(old.message, `too old resource version: ${a.modRevision}`);
  const token = await rejection(s.reader.list(configMapType, 'ns', q({ limit: 1, continue: chunk.metadata.continue })));
  t.is(token.code, 410);
  t.regex(token.message, /^The provided continue parameter is too old/);
  await s.close();
});

test('a future exact revision is 504; NotOlderThan waits for the cache to reach it first', async (t) => {
  const s = setup();
  const a = await s.put('ns', 'a');
  const future = await rejection(s.reader.list(configMapType, 'ns', q({ resourceVersion: String(a.modRevision + 50), resourceVersionMatch: 'Exact' })));
  t.is(future.code, 504);
  t.is(future.message, `Too large resource version: ${a.modRevision + 50}`);
  t.deepEqual(s.waits, []);
  const l = await s.reader.list(configMapType, 'ns', q({ resourceVersion: String(a.modRevision), resourceVersionMatch: 'NotOlderThan' }));
  t.deepEqual(names(l), ['a']);
  t.deepEqual(s.waits, [[a.modRevision, 1234]]);
  await s.close();
});

test('undecodable stored values make the list a 500 that names every one of them', async (t) => {
  const s = setup();
  await s.put('ns', 'good');
  const bad1 = await s.storage.create(objectKey(configMapType, 'ns', 'bad1'), Buffer.from('{not json'));
  const bad2 = await s.storage.create(objectKey(configMapType, 'ns', 'bad2'), Buffer.from('[]'));
  const err = await rejection(s.reader.list(configMapType, 'ns', q()));
  t.is(err.code, 500);
  t.regex(err.message, /^Internal error occurred: failed to decode 2 stored object\(s\): /);
  t.true(err.message.includes(`/core/configmaps/ns/bad1 at revision ${bad1.modRevision}: not JSON`));
  t.true(err.message.includes(`/core/configmaps/ns/bad2 at revision ${bad2.modRevision}: not an object with metadata`));
  await s.close();
});

test('the caller’s item for a stored version replaces decoding it; with selectors it is not asked', async (t) => {
  const s = setup();
  await s.put('ns', 'good', { app: 'x' });
  // Undecodable: a list that decoded it would be a 500.
  const known = await s.storage.create(objectKey(configMapType, 'ns', 'known'), Buffer.from('{not json'));
  const asked: string[] = [];
  const stored = (key: string, rev: number) => {
    asked.push(`${key}@${rev}`);
    return key === known.key && rev === known.modRevision ? { metadata: {}, marker: true } : undefined;
  };
  const list = await s.reader.list(configMapType, 'ns', q({ stored }));
  t.deepEqual(
    list.items.map((o) => [o.metadata.name, o.marker, o.apiVersion, o.kind]),
    [
      ['good', undefined, 'v1', 'ConfigMap'],
      [undefined, true, 'v1', 'ConfigMap'],
    ],
  );
  t.is(asked.length, 2);
  asked.length = 0;
  const err = await rejection(s.reader.list(configMapType, 'ns', q({ stored, labelSelector: parseLabelSelector('app=x') })));
  t.is(err.code, 500, 'selectors decode every object');
  t.deepEqual(asked, []);
  await s.close();
});

test('selects and fieldValue read labels, metadata fields and the type’s own field selectors', (t) => {
  const reader = new ListReader({ list: () => Promise.reject(new Error('not read')) }, { waitForRevision: () => Promise.resolve() }, 0);
  const p = { metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'n1' } };
  const sel = (labels: string, fields: string) => ({
    labelSelector: parseLabelSelector(labels),
    fieldSelector: parseFieldSelector(fields, selectableFields(podType)),
  });
  t.true(reader.selects(podType, p, sel('app=web', 'spec.nodeName=n1,metadata.namespace=ns')));
  t.false(reader.selects(podType, p, sel('app=db', '')));
  t.false(reader.selects(podType, p, sel('', 'spec.nodeName=n2')));
  t.is(fieldValue(podType, { metadata: {} }, 'spec.nodeName'), '');
  t.is(fieldValue(podType, p, 'metadata.name'), 'web');
  t.true(selectableFields(podType).has('status.phase'));
  t.false(selectableFields(configMapType).has('status.phase'));
});
