import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { BootstrapTokenAuthenticator } from '../../../../apiserver/authn/bootstrap-token';
import { CachedObjectGetter } from '../../../../apiserver/authn/cached-object-getter';
import { AuthnLookupCaches } from '../../../../apiserver/authn/lookup-caches';
import { identityOnly, ObjectCache } from '../../../../apiserver/authn/object-cache';
import type { BoundObjectGetter } from '../../../../apiserver/authn/service-account-token';
import { StoreObjectGetter } from '../../../../apiserver/authn/store-object-getter';
import { StoreInformers, typedHandler } from '../../../../apiserver/store/list-watch';
import { adminCtx, openFixture, type Fixture } from '../controllers/store-fixture';

/** Counts the live reads the cached getter falls back to. */
class CountingGetter implements BoundObjectGetter {
  reads: string[] = [];
  constructor(private readonly inner: BoundObjectGetter) {}
  async get(kind: 'ServiceAccount' | 'Pod' | 'Secret' | 'Node', ns: string, name: string): Promise<KObject | null> {
    this.reads.push(`${kind}/${ns}/${name}`);
    return this.inner.get(kind, ns, name);
  }
}

/** Polls until the condition holds; generous, as the watch delivers asynchronously on a shared machine. */
async function eventually(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

async function open(t: { teardown(fn: () => Promise<void> | void): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  return f;
}

/** A cache fed by an informer over the fixture's store, a counting live getter, and the getter under test. */
async function cached(t: { teardown(fn: () => Promise<void> | void): void }, f: Fixture, opts: { run: boolean }) {
  const cache = new ObjectCache(identityOnly);
  const live = new CountingGetter(new StoreObjectGetter(f.store, f.registry));
  const getter = new CachedObjectGetter(cache, f.registry, live);
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const followed = ['serviceaccounts', 'pods', 'nodes'].map((r) => f.type('', 'v1', r)).map((t) => {
    const informer = informers.informer(t);
    informer.addEventHandler(typedHandler(t, cache));
    return informer;
  });
  if (opts.run) {
    const ac = new AbortController();
    informers.start(ac.signal);
    t.teardown(async () => {
      ac.abort();
      await informers.stopped();
    });
    for (const informer of followed) await informer.whenSynced();
  }
  return { cache, live, getter };
}

const sa = (f: Fixture) => f.type('', 'v1', 'serviceaccounts');

test('a cached object is answered without a store read, as its identity only', async (t) => {
  const f = await open(t);
  const before = await f.store.create(sa(f), 'ns1', { metadata: { name: 'listed', labels: { a: 'b' } }, secrets: [{ name: 'x' }] }, adminCtx);
  const { cache, live, getter } = await cached(t, f, { run: true });
  // Listed at start.
  const got = await getter.get('ServiceAccount', 'ns1', 'listed');
  t.is(got?.metadata.uid, before.metadata.uid);
  t.deepEqual(Object.keys(got!.metadata).sort(), ['name', 'namespace', 'resourceVersion', 'uid']);
  t.is(got!.secrets, undefined);
  // Added later: delivered by the watch.
  const node = await f.store.create(f.type('', 'v1', 'nodes'), '', { metadata: { name: 'n1' } }, adminCtx);
  await eventually(() => cache.get(f.type('', 'v1', 'nodes'), '', 'n1') !== undefined, 'the node in the cache');
  t.is((await getter.get('Node', 'any-namespace', 'n1'))?.metadata.uid, node.metadata.uid);
  t.deepEqual(live.reads, []);
});

test('a miss is answered by a live read, which does not fill the cache', async (t) => {
  const f = await open(t);
  // No informer running: the cache stays empty, as before the first list.
  const { cache, live, getter } = await cached(t, f, { run: false });
  const made = await f.store.create(sa(f), 'ns1', { metadata: { name: 'fresh' } }, adminCtx);
  t.is((await getter.get('ServiceAccount', 'ns1', 'fresh'))?.metadata.uid, made.metadata.uid);
  t.is(await getter.get('ServiceAccount', 'ns1', 'absent'), null);
  t.deepEqual(live.reads, ['ServiceAccount/ns1/fresh', 'ServiceAccount/ns1/absent']);
  t.is(cache.get(sa(f), 'ns1', 'fresh'), undefined);
  t.is(cache.size(), 0);
});

test('a deletion is observed once the watch delivers it; a terminating object carries its deletion mark', async (t) => {
  const f = await open(t);
  const { cache, live, getter } = await cached(t, f, { run: true });
  await f.store.create(sa(f), 'ns1', { metadata: { name: 'doomed' } }, adminCtx);
  await f.store.create(sa(f), 'ns1', { metadata: { name: 'held', finalizers: ['example.com/hold'] } }, adminCtx);
  await eventually(() => cache.get(sa(f), 'ns1', 'doomed') !== undefined && cache.get(sa(f), 'ns1', 'held') !== undefined, 'both accounts cached');
  await f.store.delete(sa(f), 'ns1', 'doomed', {}, adminCtx);
  await f.store.delete(sa(f), 'ns1', 'held', {}, adminCtx);
  await eventually(() => cache.get(sa(f), 'ns1', 'doomed') === undefined, 'the deletion in the cache');
  await eventually(() => cache.get(sa(f), 'ns1', 'held')?.metadata.deletionTimestamp !== undefined, 'the deletion mark in the cache');
  live.reads = [];
  // Gone from the cache: the live read confirms it is gone.
  t.is(await getter.get('ServiceAccount', 'ns1', 'doomed'), null);
  t.deepEqual(live.reads, ['ServiceAccount/ns1/doomed']);
  t.truthy((await getter.get('ServiceAccount', 'ns1', 'held'))?.metadata.deletionTimestamp);
});

test('a namespace-restricted informer keeps only that namespace; the projection drops unwanted objects', async (t) => {
  const f = await open(t);
  const secrets = f.type('', 'v1', 'secrets');
  const mk = (ns: string, name: string) => f.store.create(secrets, ns, { metadata: { name }, type: 'Opaque', data: { k: Buffer.from('v').toString('base64') } }, adminCtx);
  await mk('svc-system', 'bootstrap-token-aaaaaa');
  await mk('svc-system', 'unrelated');
  await mk('ns1', 'bootstrap-token-bbbbbb');
  const cache = new ObjectCache((_t, o) => (o.metadata.name?.startsWith('bootstrap-token-') ? o : undefined));
  const informer = new StoreInformers(f.store, f.cache, { log: f.log }).informer(secrets, { namespace: 'svc-system' });
  informer.addEventHandler(typedHandler(secrets, cache));
  const ac = new AbortController();
  const run = informer.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  await informer.whenSynced();
  await mk('ns1', 'bootstrap-token-cccccc');
  await mk('svc-system', 'bootstrap-token-dddddd');
  await eventually(() => cache.get(secrets, 'svc-system', 'bootstrap-token-dddddd') !== undefined, 'the new token secret');
  t.is(cache.size(), 2);
  // Whole objects are kept here: the data is what a bootstrap token is checked against.
  t.is(cache.get(secrets, 'svc-system', 'bootstrap-token-aaaaaa')?.data !== undefined, true);
  t.is(cache.get(secrets, 'ns1', 'bootstrap-token-bbbbbb'), undefined);
  t.is(cache.get(secrets, 'svc-system', 'unrelated'), undefined);
});

test('wired lookup caches: a bootstrap token works at once and stops working once its deletion is watched', async (t) => {
  const f = await open(t);
  const caches = new AuthnLookupCaches({ store: f.store, cache: f.cache, registry: f.registry, log: f.log }, { serviceAccounts: true, bootstrapTokens: true });
  const ac = new AbortController();
  const run = caches.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  await eventually(() => caches.hasSynced(), 'the caches listed');
  const authn = new BootstrapTokenAuthenticator(caches.bootstrapSecrets, { now: f.clock.now, log: f.log });
  const secrets = f.type('', 'v1', 'secrets');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  await f.store.create(
    secrets,
    'svc-system',
    { metadata: { name: 'bootstrap-token-abcdef' }, type: 'bootstrap.svc.io/token', data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), 'usage-bootstrap-authentication': b64('true') } },
    adminCtx,
  );
  const req = { headers: { authorization: 'Bearer abcdef.0123456789abcdef' } } as IncomingMessage;
  // Just created: found whether or not the watch has delivered it yet.
  t.is((await authn.authenticate(req))?.username, 'system:bootstrap:abcdef');
  await f.store.delete(secrets, 'svc-system', 'bootstrap-token-abcdef', {}, adminCtx);
  await eventually(
    () =>
      authn.authenticate(req).then(
        () => false,
        (err) => err instanceof ApiError && err.code === 401,
      ),
    'the deleted token refused',
  );
  await t.throwsAsync(authn.authenticate(req), { instanceOf: ApiError, message: /Unauthorized/i });
});
