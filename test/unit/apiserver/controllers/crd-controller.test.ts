import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { CrdController } from '../../../../apiserver/controllers/crd-controller';
import { crdCondition } from '../../../../apiserver/registry/types/customresourcedefinitions';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';
import { crd } from '../registry/crd/crd-fixtures';

const everything = { labelSelector: [], fieldSelector: [] };

async function setup(t: { teardown(fn: () => Promise<void> | void): void }) {
  const f = await openFixture();
  const ac = new AbortController();
  const run = new CrdController(f.store, f.cache, f.registry, { log: f.log, now: f.clock.now }).run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
    await f.close();
  });
  return f;
}

const crdType = (f: Fixture) => f.type('apiextensions.svc.io', 'v1', 'customresourcedefinitions');
const condition = (type: string, status: string) => (o: KObject | null) => !!o && crdCondition(o, type)?.status === status;

test('a CRD gets its finalizer, NamesAccepted and Established, and its versions are served', async (t) => {
  const f = await setup(t);
  const added: string[] = [];
  f.registry.subscribe({ added: (ty) => added.push(`${ty.group}/${ty.version}/${ty.resource}`) });
  await f.store.create(crdType(f), '', crd(), adminCtx);
  const done = await waitFor(f, crdType(f), '', 'widgets.example.com', condition('Established', 'True'));
  t.deepEqual(done!.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
  t.like(crdCondition(done!, 'NamesAccepted'), { status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
  t.like(crdCondition(done!, 'Established'), { reason: 'InitialNamesAccepted' });
  t.like((done!.status as Record<string, unknown>).acceptedNames, { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
  // Registered once the status says so.
  for (let i = 0; i < 100 && !f.registry.lookup('example.com', 'v1', 'widgets'); i++) await new Promise((r) => setImmediate(r));
  const ty = f.registry.lookup('example.com', 'v1', 'widgets');
  t.truthy(ty);
  t.deepEqual(added, ['example.com/v1/widgets']);
  t.true(f.registry.groups().some((g) => g.name === 'example.com'));
});

test('names taken by another CRD of the group or a built-in type are reported NamesAccepted=False', async (t) => {
  const f = await setup(t);
  await f.store.create(crdType(f), '', crd({ names: { shortNames: ['wd'] } }), adminCtx);
  await waitFor(f, crdType(f), '', 'widgets.example.com', condition('Established', 'True'));
  // Another plural, same short name.
  await f.store.create(crdType(f), '', crd({ plural: 'wodgets', kind: 'Wodget', names: { shortNames: ['wd'] } }), adminCtx);
  const clash = await waitFor(f, crdType(f), '', 'wodgets.example.com', condition('NamesAccepted', 'False'));
  t.like(crdCondition(clash!, 'NamesAccepted'), { reason: 'NameConflict', message: '"wd" is already in use' });
  t.like(crdCondition(clash!, 'Established'), { status: 'False', reason: 'NotAccepted' });
  t.is(f.registry.lookup('example.com', 'v1', 'wodgets'), undefined);
  // Same kind.
  await f.store.create(crdType(f), '', crd({ plural: 'gadgets', kind: 'Widget', names: { singular: 'gadget', listKind: 'GadgetList' } }), adminCtx);
  const kind = await waitFor(f, crdType(f), '', 'gadgets.example.com', condition('NamesAccepted', 'False'));
  t.like(crdCondition(kind!, 'NamesAccepted'), { reason: 'KindConflict', message: '"Widget" is already in use' });
  // A built-in type of the group: apps/v1 deployments is not a group with a dot, so take the CRD kind's own group.
  await f.store.create(crdType(f), '', crd({ plural: 'leases', kind: 'Leasing', group: 'coordination.svc.io' }), adminCtx);
  const builtin = await waitFor(f, crdType(f), '', 'leases.coordination.svc.io', condition('NamesAccepted', 'False'));
  t.like(crdCondition(builtin!, 'NamesAccepted'), { reason: 'NameConflict', message: '"leases" is already in use' });
  t.is(f.registry.lookup('coordination.svc.io', 'v1', 'leases')!.kind, 'Lease');
});

test('deleting a CRD deletes its objects first, then it stops being served', async (t) => {
  const f = await setup(t);
  await f.store.create(crdType(f), '', crd(), adminCtx);
  await waitFor(f, crdType(f), '', 'widgets.example.com', condition('Established', 'True'));
  for (let i = 0; i < 100 && !f.registry.lookup('example.com', 'v1', 'widgets'); i++) await new Promise((r) => setImmediate(r));
  const w = f.registry.lookup('example.com', 'v1', 'widgets')!;
  for (const name of ['a', 'b']) await f.store.create(w, 'default', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { replicas: 1 } }, adminCtx);
  const res = await f.store.delete(crdType(f), '', 'widgets.example.com', {}, adminCtx);
  t.false(res.gone);
  await waitFor(f, crdType(f), '', 'widgets.example.com', (o) => o === null);
  t.is((await f.store.list(w, '', everything)).items.length, 0);
  t.is(f.registry.lookup('example.com', 'v1', 'widgets'), undefined);
});
