import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { RootCaPublisher } from '../../../../apiserver/controllers/root-ca-publisher';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';

const CA = '-----BEGIN CERTIFICATE-----\nTESTCA\n-----END CERTIFICATE-----\n';

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  return { f, publisher: new RootCaPublisher(f.store, f.cache, f.registry, { caPem: CA, log: f.log }) };
}

const ns = (f: Fixture, name: string) => f.store.create(f.type('', 'v1', 'namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, adminCtx);
const hasCa = (o: KObject | null) => !!o && (o.data as Record<string, string> | undefined)?.['ca.crt'] === CA;

test('sync creates the ConfigMap, repairs changed data and leaves other fields alone', async (t) => {
  const { f, publisher } = await setup(t);
  const cms = f.type('', 'v1', 'configmaps');
  await ns(f, 'a');
  await publisher.sync('a');
  const cm = await f.store.get(cms, 'a', 'kube-root-ca.crt');
  t.deepEqual(cm.data, { 'ca.crt': CA });
  t.truthy(cm.metadata.annotations?.['svc.io/description']);

  // A user changes the data and adds a label: the data comes back, the label stays.
  await f.store.update(cms, 'a', 'kube-root-ca.crt', (c) => ({ ...c!, metadata: { ...c!.metadata, labels: { team: 'x' } }, data: { 'ca.crt': 'forged', extra: '1' } }), adminCtx);
  await publisher.sync('a');
  const fixed = await f.store.get(cms, 'a', 'kube-root-ca.crt');
  t.deepEqual(fixed.data, { 'ca.crt': CA });
  t.deepEqual(fixed.metadata.labels, { team: 'x' });

  // Nothing to do: no write, the resourceVersion stays.
  await publisher.sync('a');
  t.is((await f.store.get(cms, 'a', 'kube-root-ca.crt')).metadata.resourceVersion, fixed.metadata.resourceVersion);

  // Absent namespace: nothing, no error.
  await t.notThrowsAsync(publisher.sync('nope'));
  await t.throwsAsync(f.store.get(cms, 'nope', 'kube-root-ca.crt'));
});

test('running: every namespace gets it, new ones too, and a deleted or edited one is put back', async (t) => {
  const { f, publisher } = await setup(t);
  const cms = f.type('', 'v1', 'configmaps');
  await ns(f, 'before');
  const ac = new AbortController();
  const run = publisher.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  t.true(hasCa(await waitFor(f, cms, 'before', 'kube-root-ca.crt', hasCa)));
  await ns(f, 'after');
  t.true(hasCa(await waitFor(f, cms, 'after', 'kube-root-ca.crt', hasCa)));

  await f.store.delete(cms, 'after', 'kube-root-ca.crt', {}, adminCtx);
  t.true(hasCa(await waitFor(f, cms, 'after', 'kube-root-ca.crt', hasCa)), 'recreated after deletion');

  await f.store.update(cms, 'before', 'kube-root-ca.crt', (c) => ({ ...c!, data: { 'ca.crt': 'forged' } }), adminCtx);
  t.true(hasCa(await waitFor(f, cms, 'before', 'kube-root-ca.crt', hasCa)), 'repaired after an edit');
});
