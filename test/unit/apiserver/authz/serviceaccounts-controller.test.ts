import test from 'ava';
import pino from 'pino';
import { ServiceAccountsController } from '../../../../apiserver/controllers/serviceaccounts';
import { adminCtx, openFixture, waitFor } from '../controllers/store-fixture';

test('every namespace gets a default service account, again after deletion', async (t) => {
  const f = await openFixture();
  try {
    const nsT = f.type('', 'v1', 'namespaces');
    const saT = f.type('', 'v1', 'serviceaccounts');
    await f.store.create(nsT, '', { metadata: { name: 'early' } }, adminCtx);
    const ac = new AbortController();
    const run = new ServiceAccountsController(f.store, f.cache, f.registry, pino({ level: 'silent' })).run(ac.signal);
    t.truthy(await waitFor(f, saT, 'early', 'default', (o) => o !== null));
    await f.store.create(nsT, '', { metadata: { name: 'later' } }, adminCtx);
    t.truthy(await waitFor(f, saT, 'later', 'default', (o) => o !== null));
    await f.store.delete(saT, 'later', 'default', {}, adminCtx);
    t.truthy(await waitFor(f, saT, 'later', 'default', (o) => o !== null));
    ac.abort();
    await run;
  } finally {
    await f.close();
  }
});
