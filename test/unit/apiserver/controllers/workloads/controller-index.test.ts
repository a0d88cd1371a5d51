import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { ensureControllerIndex, ownedAndOrphans, ownedBy } from '../../../../../apiserver/controllers/workloads/controller-index';
import { StoreInformers, waitForCacheSync } from '../../../../../apiserver/store/list-watch';
import { adminCtx, openFixture } from '../store-fixture';

test('the controller index: owned objects by controller uid in the owner\'s namespace, orphans per namespace; added once however many loops ask', async (t) => {
  const f = await openFixture();
  const ac = new AbortController();
  t.teardown(async () => {
    ac.abort();
    await f.close();
  });
  const cms = f.type('', 'v1', 'configmaps');
  const ref = (uid: string, controller = true) => [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller }];
  const mk = (ns: string, name: string, ownerReferences?: KObject['metadata']['ownerReferences']) =>
    f.store.create(cms, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(ownerReferences ? { ownerReferences } : {}) } }, adminCtx);
  await mk('x', 'mine', ref('a'));
  await mk('x', 'theirs', ref('b'));
  await mk('x', 'orphan');
  await mk('x', 'owned-not-controlled', ref('a', false));
  await mk('y', 'orphan-elsewhere');
  await mk('y', 'same-uid-elsewhere', ref('a'));
  const informers = new StoreInformers(f.store, f.cache, { log: f.log });
  const inf = informers.informer(cms);
  ensureControllerIndex(inf);
  ensureControllerIndex(inf);
  t.true(inf.hasIndexer('controllerUID'));
  informers.start(ac.signal);
  t.true(await waitForCacheSync(ac.signal, inf));
  t.deepEqual(ownedAndOrphans(inf, 'x', 'a').map((o) => o.metadata.name).sort(), ['mine', 'orphan', 'owned-not-controlled']);
  t.deepEqual(ownedBy(inf, 'b').map((o) => o.metadata.name), ['theirs']);
});
