import test from 'ava';
import { handleList } from '../../../../apiserver/handlers/list';
import { admin, configMap, openStore, type StoreFixture } from '../store/fixture';
import { call } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';

async function withItems(body: (f: StoreFixture) => Promise<void>): Promise<void> {
  const f = await openStore();
  try {
    for (const [name, app] of [['a', 'web'], ['b', 'db'], ['c', 'web']]) {
      await f.store.create(f.type('configmaps'), 'default', configMap(name, { labels: { app } }), admin);
    }
    await body(f);
  } finally {
    await f.close();
  }
}

const names = (body: { items: Array<{ metadata: { name: string } }> }) => body.items.map((o) => o.metadata.name);

test('GET collection answers the list with its kind and resourceVersion; selectors filter it', (t) =>
  withItems(async (f) => {
    const all = await call(f, handleList, 'GET', CMS);
    t.is(all.statusCode, 200);
    t.like(all.body, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: String(await f.storage.currentRevision()) } });
    t.deepEqual(names(all.body), ['a', 'b', 'c']);
    t.deepEqual(names((await call(f, handleList, 'GET', `${CMS}?labelSelector=app%3Dweb`)).body), ['a', 'c']);
    t.deepEqual(names((await call(f, handleList, 'GET', `${CMS}?fieldSelector=metadata.name%3Db`)).body), ['b']);
  }));

test('limit and continue page through the list', (t) =>
  withItems(async (f) => {
    const first = await call(f, handleList, 'GET', `${CMS}?limit=2`);
    t.deepEqual(names(first.body), ['a', 'b']);
    t.is(first.body.metadata.remainingItemCount, 1);
    const next = await call(f, handleList, 'GET', `${CMS}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    t.deepEqual(names(next.body), ['c']);
    t.is(next.body.metadata.continue, undefined);
  }));

test('bad parameters are 400 Status answers', (t) =>
  withItems(async (f) => {
    const limit = await call(f, handleList, 'GET', `${CMS}?limit=ten`);
    t.is(limit.statusCode, 400);
    t.is(limit.body.message, 'invalid limit "ten": must be an integer');
    const field = await call(f, handleList, 'GET', `${CMS}?fieldSelector=spec.nodeName%3Dn1`);
    t.is(field.statusCode, 400);
    t.like(field.body, { kind: 'Status', reason: 'BadRequest', code: 400 });
    const token = await call(f, handleList, 'GET', `${CMS}?continue=garbage`);
    t.is(token.statusCode, 400);
    t.regex(token.body.message, /^continue key is not valid/);
    const match = await call(f, handleList, 'GET', `${CMS}?resourceVersionMatch=Exact`);
    t.is(match.statusCode, 400);
  }));

test('a list at a compacted exact resourceVersion is 410 Expired', (t) =>
  withItems(async (f) => {
    const old = await f.storage.currentRevision();
    await f.store.create(f.type('configmaps'), 'default', configMap('d'), admin);
    await f.storage.compact(await f.storage.currentRevision());
    const res = await call(f, handleList, 'GET', `${CMS}?resourceVersion=${old}&resourceVersionMatch=Exact`);
    t.is(res.statusCode, 410);
    t.like(res.body, { reason: 'Expired', code: 410, message: `too old resource version: ${old}` });
  }));

test('a large list is gzip-compressed when the client accepts it', (t) =>
  withItems(async (f) => {
    for (let i = 0; i < 20; i++) await f.store.create(f.type('configmaps'), 'default', configMap(`big-${i}`), admin);
    const res = await call(f, handleList, 'GET', CMS, { headers: { 'accept-encoding': 'gzip' } });
    t.is(res.headers['content-encoding'], 'gzip');
    t.is(res.body.items.length, 23);
  }));

test('limit is an int64: beyond it a 400, a huge valid one lists everything (never a storage error)', (t) =>
  withItems(async (f) => {
    for (const text of ['99999999999999999999', '9223372036854775808', '-9223372036854775809']) {
      const res = await call(f, handleList, 'GET', `${CMS}?limit=${text}`);
      t.is(res.statusCode, 400, text);
      t.like(res.body, { kind: 'Status', reason: 'BadRequest', code: 400 });
      t.regex(res.body.message, new RegExp(`^invalid limit "${text}": value out of range`));
    }
    for (const text of ['9223372036854775807', '9007199254740993', '1000', '+2', '-9223372036854775808', '0']) {
      const res = await call(f, handleList, 'GET', `${CMS}?limit=${encodeURIComponent(text)}`);
      t.is(res.statusCode, 200, text);
      t.deepEqual(names(res.body), text === '+2' ? ['a', 'b'] : ['a', 'b', 'c'], text);
    }
    for (const text of ['1.5', '1e3', ' 1', '0x10']) {
      const res = await call(f, handleList, 'GET', `${CMS}?limit=${encodeURIComponent(text)}`);
      t.is(res.statusCode, 400, text);
      t.is(res.body.message, `invalid limit "${text}": must be an integer`);
    }
  }));

test('a continue token pages only its own list; forged ones are 400, never a storage error', (t) =>
  withItems(async (f) => {
    await f.store.create(f.type('configmaps'), 'other', configMap('z'), admin);
    const first = await call(f, handleList, 'GET', `${CMS}?limit=1`);
    const token = first.body.metadata.continue as string;
    // Another namespace's list, and another resource's, refuse it.
    const foreign = await call(f, handleList, 'GET', `/api/v1/namespaces/other/configmaps?limit=1&continue=${encodeURIComponent(token)}`);
    t.is(foreign.statusCode, 400);
    t.regex(foreign.body.message, /^continue key is not valid: it was issued for another list/);
    const secrets = await call(f, handleList, 'GET', `/api/v1/namespaces/default/secrets?limit=1&continue=${encodeURIComponent(token)}`);
    t.is(secrets.statusCode, 400);
    // The all-namespaces list contains the token's list and goes on from it.
    const all = await call(f, handleList, 'GET', `/api/v1/configmaps?limit=10&continue=${encodeURIComponent(token)}`);
    t.is(all.statusCode, 200);
    t.deepEqual(names(all.body), ['b', 'c', 'z']);
    const rev = Number(first.body.metadata.resourceVersion);
    const forge = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');
    for (const [what, forged] of [
      ['a fractional revision', forge({ v: 'meta.svc.io/v1', rv: rev + 0.5, start: '/core/configmaps/default/a' })],
      ['a revision beyond any int', forge({ v: 'meta.svc.io/v1', rv: 1e300, start: '/core/configmaps/default/a' })],
      ['a future revision', forge({ v: 'meta.svc.io/v1', rv: rev + 1000, start: '/core/configmaps/default/a' })],
      ['a string revision', forge({ v: 'meta.svc.io/v1', rv: String(rev), start: '/core/configmaps/default/a' })],
      ['an empty key', forge({ v: 'meta.svc.io/v1', rv: rev, start: '' })],
      ['a key climbing out of the prefix', forge({ v: 'meta.svc.io/v1', rv: rev, start: '/core/configmaps/default/../../secrets/default/a' })],
      ['another version', forge({ v: 'meta.k8s.io/v1', rv: rev, start: '/core/configmaps/default/a' })],
      ['JSON that is no object', forge(null)],
    ] as const) {
      const res = await call(f, handleList, 'GET', `${CMS}?limit=1&continue=${forged}`);
      t.is(res.statusCode, 400, what);
      t.regex(res.body.message, /^continue key is not valid/, what);
    }
  }));
