import test from 'ava';
import { TokenCleaner } from '../../../../apiserver/controllers/token-cleaner';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';

async function secret(f: Fixture, name: string, data: Record<string, string>, type = 'bootstrap.svc.io/token', namespace = 'svc-system'): Promise<void> {
  const b64: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) b64[k] = Buffer.from(v).toString('base64');
  await f.store.create(f.type('', 'v1', 'secrets'), namespace, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type, data: b64 }, adminCtx);
}

async function names(f: Fixture, namespace = 'svc-system'): Promise<string[]> {
  const list = await f.store.list(f.type('', 'v1', 'secrets'), namespace, { labelSelector: [], fieldSelector: [] });
  return list.items.map((s) => s.metadata.name!).sort();
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  return { f, cleaner: new TokenCleaner(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log }) };
}

test('deletes bootstrap token Secrets once their expiration passes, and only those', async (t) => {
  const { f, cleaner } = await setup(t);
  const token = (id: string, expiration?: string) => ({ 'token-id': id, 'token-secret': '0123456789abcdef', ...(expiration ? { expiration } : {}) });
  await secret(f, 'bootstrap-token-aaaaaa', token('aaaaaa', '2025-03-01T12:01:00Z'));
  await secret(f, 'bootstrap-token-bbbbbb', token('bbbbbb', '2025-03-01T13:00:00Z'));
  await secret(f, 'bootstrap-token-cccccc', token('cccccc'));
  await secret(f, 'bootstrap-token-dddddd', token('dddddd', 'garbage'));
  await secret(f, 'opaque-with-expiration', { expiration: '2000-01-01T00:00:00Z' }, 'Opaque');
  await secret(f, 'bootstrap-token-eeeeee', token('eeeeee', '2000-01-01T00:00:00Z'), 'bootstrap.svc.io/token', 'default');

  // Unparseable counts as expired (upstream); nothing else yet.
  t.deepEqual(await cleaner.clean(), ['bootstrap-token-dddddd']);
  f.clock.advance(60_000);
  t.deepEqual(await cleaner.clean(), ['bootstrap-token-aaaaaa']);
  f.clock.advance(3600_000);
  t.deepEqual(await cleaner.clean(), ['bootstrap-token-bbbbbb']);
  t.deepEqual(await names(f), ['bootstrap-token-cccccc', 'opaque-with-expiration']);
  t.deepEqual(await names(f, 'default'), ['bootstrap-token-eeeeee'], 'only svc-system holds bootstrap tokens');
  t.true(f.lines.some((l) => l.includes('deleted expired bootstrap token') && l.includes('bootstrap-token-aaaaaa')));
});

test('running: a token created already expired is deleted on its event', async (t) => {
  const { f } = await setup(t);
  let passes = 0;
  // The periodic pass runs once; the later deletion can only come from the Secret event.
  const sleep = (_ms: number, signal: AbortSignal) => {
    passes++;
    return new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
  };
  const cleaner = new TokenCleaner(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log, sleep });
  const ac = new AbortController();
  const running = cleaner.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
  });
  while (passes === 0) await new Promise((r) => setTimeout(r, 5));
  await secret(f, 'bootstrap-token-ffffff', { 'token-id': 'ffffff', 'token-secret': '0123456789abcdef', expiration: '2025-03-01T11:00:00Z' });
  const gone = await waitFor(f, f.type('', 'v1', 'secrets'), 'svc-system', 'bootstrap-token-ffffff', (o) => o === null);
  t.is(gone, null);
  t.is(passes, 1);
});
