import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { ApiError } from '../../../../apiserver/api/errors';
import { apiError, configMap, ctx, pod, type StoreFixture, withStore } from './fixture';

const NS = 'default';

const cms = (f: StoreFixture) => f.type('configmaps');

// ---- create / get ----

test('create fills system metadata; get reads back exactly what create answered', (t) =>
  withStore(async (f) => {
    const created = await f.store.create(cms(f), NS, configMap('a'), ctx());
    const m = created.metadata;
    t.is(m.namespace, NS);
    t.regex(m.uid!, /^[0-9a-f-]{36}$/);
    t.is(m.creationTimestamp, '2025-03-01T12:00:00Z');
    t.is(m.generation, 1);
    t.is(m.resourceVersion, String(await f.storage.currentRevision()));
    t.like(created, { apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
    t.deepEqual(await f.store.get(cms(f), NS, 'a'), created);
  }));

test('create refuses a resourceVersion, a foreign namespace and an existing name; nothing is stored', (t) =>
  withStore(async (f) => {
    const rv = await apiError(() => f.store.create(cms(f), NS, { ...configMap('a'), metadata: { name: 'a', resourceVersion: '5' } }, ctx()));
    t.is(rv.code, 400);
    t.regex(rv.message, /resourceVersion should not be set/);
    const ns = await apiError(() => f.store.create(cms(f), NS, { ...configMap('a'), metadata: { name: 'a', namespace: 'other' } }, ctx()));
    t.is(ns.code, 400);
    t.is((await apiError(() => f.store.get(cms(f), NS, 'a'))).code, 404);
    await f.store.create(cms(f), NS, configMap('a'), ctx());
    const dup = await apiError(() => f.store.create(cms(f), NS, configMap('a'), ctx()));
    t.is(dup.code, 409);
    t.is(dup.reason, 'AlreadyExists');
    t.is(dup.message, 'configmaps "a" already exists');
  }));

test('create of a cluster-scoped object drops the namespace; defaults and validation run', async (t) =>
  withStore(async (f) => {
    const ns = await f.store.create(f.type('namespaces'), 'ignored', { metadata: { name: 'team', namespace: 'x' } }, ctx());
    t.is(ns.metadata.namespace, undefined);
    t.is((ns.status as { phase: string }).phase, 'Active'); // the type's defaults
    const bad = await apiError(() => f.store.create(cms(f), NS, configMap('Not_A_Name'), ctx()));
    t.is(bad.code, 422);
    t.is(bad.reason, 'Invalid');
    t.is(bad.details?.causes?.[0].field, 'metadata.name');
  }));

test('generateName: the prefix plus five characters of the upstream alphabet, the prefix cut to keep 63', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(cms(f), NS, { metadata: { generateName: 'web-' }, data: {} }, ctx());
    t.regex(a.metadata.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    t.is(a.metadata.generateName, 'web-');
    const long = 'p'.repeat(70);
    const b = await f.store.create(cms(f), NS, { metadata: { generateName: long } }, ctx());
    t.is(b.metadata.name!.length, 63);
    t.true(b.metadata.name!.startsWith('p'.repeat(58)));
    t.deepEqual((await f.store.get(cms(f), NS, a.metadata.name!)).metadata.uid, a.metadata.uid);
  }));

test('get of a missing object is 404 NotFound naming it', (t) =>
  withStore(async (f) => {
    const err = await apiError(() => f.store.get(cms(f), NS, 'nope'));
    t.is(err.code, 404);
    t.deepEqual(err.toStatus().details, { name: 'nope', group: undefined, kind: 'configmaps' });
  }));

test('get returns the caller’s object for the version read when it has one (typed as a decoded one)', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(cms(f), NS, configMap('a'), ctx());
    const asked: Array<[string, number]> = [];
    const got = await f.store.get(cms(f), NS, 'a', undefined, (key, rev) => {
      asked.push([key, rev]);
      return { metadata: {}, marker: true };
    });
    t.deepEqual(asked, [[`/core/configmaps/${NS}/a`, Number(a.metadata.resourceVersion)]]);
    t.like(got, { marker: true, apiVersion: 'v1', kind: 'ConfigMap' });
    t.deepEqual(await f.store.get(cms(f), NS, 'a', undefined, () => undefined), a, 'nothing known: decoded');
  }));

// ---- update / optimistic concurrency ----

test('update replaces the object, keeps system metadata and bumps generation only when the spec changes', (t) =>
  withStore(async (f) => {
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx());
    const { object: u, created } = await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'w' }, metadata: { ...cur!.metadata, uid: undefined, creationTimestamp: 'x' } }), ctx());
    t.false(created);
    t.deepEqual(u.data, { k: 'w' });
    t.is(u.metadata.uid, c.metadata.uid);
    t.is(u.metadata.creationTimestamp, c.metadata.creationTimestamp);
    t.is(u.metadata.generation, 1, 'a configmap has no spec fields (specFields: [])');
    t.true(Number(u.metadata.resourceVersion) > Number(c.metadata.resourceVersion));
    t.deepEqual(await f.store.get(cms(f), NS, 'a'), u);

    const pods = f.type('pods');
    await f.store.create(pods, NS, pod('web'), ctx());
    const { object: l } = await f.store.update(pods, NS, 'web', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { a: 'b' } } }), ctx());
    t.is(l.metadata.generation, 1, 'metadata only');
    const { object: img } = await f.store.update(
      pods,
      NS,
      'web',
      (cur) => {
        const next = structuredClone(cur!);
        (next.spec as { containers: Array<{ image: string }> }).containers[0].image = 'registry.example/app:2';
        return next;
      },
      ctx(),
    );
    t.is(img.metadata.generation, 2, 'a spec change');
  }));

test('an update that changes nothing writes nothing and keeps the resourceVersion', (t) =>
  withStore(async (f) => {
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx());
    const before = await f.storage.currentRevision();
    const { object } = await f.store.update(cms(f), NS, 'a', (cur) => cur!, ctx());
    t.is(object.metadata.resourceVersion, c.metadata.resourceVersion);
    t.is(await f.storage.currentRevision(), before);
  }));

test('a stale pinned resourceVersion is 409; an unpinned update is recomputed on the latest object', (t) =>
  withStore(async (f) => {
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx());
    await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'second' } }), ctx());
    const stale = await apiError(() => f.store.update(cms(f), NS, 'a', () => ({ ...c, data: { k: 'third' } }), ctx()));
    t.is(stale.code, 409);
    t.is(stale.message, 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again');
    t.deepEqual((await f.store.get(cms(f), NS, 'a')).data, { k: 'second' });

    // A concurrent write lands between compute's read and the store's write: compute runs again.
    let calls = 0;
    const { object } = await f.store.update(
      cms(f),
      NS,
      'a',
      async (cur) => {
        calls++;
        if (calls === 1) await f.store.update(cms(f), NS, 'a', (x) => ({ ...x!, metadata: { ...x!.metadata, labels: { racer: 'won' } } }), ctx());
        const next = structuredClone(cur!);
        delete next.metadata.resourceVersion;
        next.data = { k: 'mine' };
        return next;
      },
      ctx(),
    );
    t.is(calls, 2);
    t.deepEqual(object.data, { k: 'mine' });
    t.deepEqual(object.metadata.labels, { racer: 'won' });
  }));

test('update: a UID or name that does not match is refused; a missing object is 404 unless allowCreate', (t) =>
  withStore(async (f) => {
    await f.store.create(cms(f), NS, configMap('a'), ctx());
    const uid = await apiError(() => f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, uid: 'other' } }), ctx()));
    t.is(uid.code, 409);
    t.regex(uid.message, /^Precondition failed: UID in precondition: other, UID in object meta: /);
    const name = await apiError(() => f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, name: 'b' } }), ctx()));
    t.is(name.code, 400);
    t.is(name.message, 'the name of the object (b) does not match the name on the URL (a)');
    t.is((await apiError(() => f.store.update(cms(f), NS, 'missing', () => configMap('missing'), ctx()))).code, 404);
    const made = await f.store.update(cms(f), NS, 'made', () => ({ ...configMap('made'), metadata: { resourceVersion: '3' } }), ctx(), true);
    t.true(made.created);
    t.is(made.object.metadata.name, 'made');
  }));

// ---- dry run ----

test('dry-run create, update and delete answer the result and write nothing', (t) =>
  withStore(async (f) => {
    const dry = ctx({ dryRun: true });
    const start = await f.storage.currentRevision();
    const would = await f.store.create(cms(f), NS, configMap('a'), dry);
    t.is(would.metadata.name, 'a');
    t.truthy(would.metadata.uid);
    t.is(await f.storage.currentRevision(), start);
    t.is((await apiError(() => f.store.get(cms(f), NS, 'a'))).code, 404);

    const real = await f.store.create(cms(f), NS, configMap('a'), ctx());
    const after = await f.storage.currentRevision();
    const { object } = await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'dry' } }), dry);
    t.deepEqual(object.data, { k: 'dry' });
    t.is(object.metadata.resourceVersion, real.metadata.resourceVersion);
    const del = await f.store.delete(cms(f), NS, 'a', {}, dry);
    t.true(del.gone);
    t.is(await f.storage.currentRevision(), after);
    t.deepEqual(await f.store.get(cms(f), NS, 'a'), real);
    t.true(f.admitted.filter((a) => a.dryRun).length === 3, 'admission is told the write is a dry run');
  }));

// ---- status sub-resource ----

test('the main resource ignores status; /status changes status only', (t) =>
  withStore(async (f) => {
    const pvcs = f.type('persistentvolumeclaims');
    const claim: KObject = {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Bound' },
    };
    const c = await f.store.create(pvcs, NS, claim, ctx());
    t.is((c.status as { phase?: string }).phase, 'Pending'); // status from the client is reset on create
    const main = await f.store.update(pvcs, NS, 'data', (cur) => ({ ...cur!, status: { phase: 'Lost' } }), ctx());
    t.is((main.object.status as { phase?: string }).phase, 'Pending');
    const viaStatus = await f.store.update(
      pvcs,
      NS,
      'data',
      (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), volumeName: 'pv-1' }, status: { phase: 'Bound' }, metadata: { ...cur!.metadata, finalizers: ['example.com/x'] } }),
      ctx({ subresource: 'status' }),
    );
    t.is((viaStatus.object.status as { phase?: string }).phase, 'Bound');
    t.is((viaStatus.object.spec as { volumeName?: string }).volumeName, undefined);
    t.is(viaStatus.object.metadata.finalizers, undefined);
    t.is(f.admitted.at(-1)?.subresource, 'status');
  }));

// ---- managedFields ----

test('managedFields record the field manager, or the user agent, per write', (t) =>
  withStore(async (f) => {
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx({ fieldManager: 'tool' }));
    t.is(c.metadata.managedFields?.length, 1);
    t.like(c.metadata.managedFields![0], { manager: 'tool', operation: 'Update', apiVersion: 'v1', time: '2025-03-01T12:00:00Z' });
    await f.clock.advance(60_000);
    const { object } = await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'v', other: 'x' } }), ctx({ userAgent: 'kubectl/v1.31.0 (linux/amd64) kubernetes/abc' }));
    const managers = object.metadata.managedFields!.map((m) => [m.manager, m.time]);
    t.deepEqual(managers, [
      ['tool', '2025-03-01T12:00:00Z'],
      ['kubectl', '2025-03-01T12:01:00Z'],
    ]);
  }));

// ---- admission ----

test('admission sees each write with its old object, may change it, and a rejection writes nothing', (t) =>
  withStore(async (f) => {
    f.admit = (a) => {
      if (a.operation === 'CREATE') a.object!.metadata.labels = { admitted: 'yes' };
    };
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx());
    t.deepEqual(c.metadata.labels, { admitted: 'yes' });
    await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'w' } }), ctx());
    await f.store.delete(cms(f), NS, 'a', {}, ctx());
    t.deepEqual(
      f.admitted.map((a) => [a.operation, a.name, a.username, a.object?.data, a.oldObject?.data]),
      [
        ['CREATE', 'a', 'svc-admin', { k: 'v' }, undefined],
        ['UPDATE', 'a', 'svc-admin', { k: 'w' }, { k: 'v' }],
        ['DELETE', 'a', 'svc-admin', undefined, { k: 'w' }],
      ],
    );
    f.admit = () => {
      throw new ApiError('Forbidden', 'no');
    };
    const start = await f.storage.currentRevision();
    t.is((await apiError(() => f.store.create(cms(f), NS, configMap('b'), ctx()))).code, 403);
    t.is(await f.storage.currentRevision(), start);
  }));

// ---- deletion: finalizers, grace periods, namespaces ----

test('finalizers hold a deleted object; adding one is refused; removing the last removes the object', (t) =>
  withStore(async (f) => {
    await f.store.create(cms(f), NS, configMap('a', { finalizers: ['example.com/hold'] }), ctx());
    const d = await f.store.delete(cms(f), NS, 'a', {}, ctx());
    t.false(d.gone);
    t.is(d.object.metadata.deletionTimestamp, '2025-03-01T12:00:00Z');
    t.is(d.object.metadata.deletionGracePeriodSeconds, 0);
    const more = await apiError(() =>
      f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/hold', 'example.com/more'] } }), ctx()),
    );
    t.is(more.code, 422);
    t.regex(more.message, /no new finalizers can be added if the object is being deleted/);
    const { object } = await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), ctx());
    t.is((await apiError(() => f.store.get(cms(f), NS, 'a'))).code, 404);
    t.is(object.metadata.resourceVersion, String(await f.storage.currentRevision()), 'the answer carries the deletion revision');
  }));

test('a scheduled pod gets its grace period; a repeated delete only shortens it; unscheduled pods go at once', (t) =>
  withStore(async (f) => {
    const pods = f.type('pods');
    await f.store.create(pods, NS, pod('bound', { nodeName: 'n1', terminationGracePeriodSeconds: 45 }), ctx());
    const first = await f.store.delete(pods, NS, 'bound', {}, ctx());
    t.false(first.gone);
    t.is(first.object.metadata.deletionTimestamp, '2025-03-01T12:00:45Z');
    t.is(first.object.metadata.deletionGracePeriodSeconds, 45);
    const longer = await f.store.delete(pods, NS, 'bound', { gracePeriodSeconds: 100 }, ctx());
    t.is(longer.object.metadata.resourceVersion, first.object.metadata.resourceVersion, 'a longer grace period changes nothing');
    const shorter = await f.store.delete(pods, NS, 'bound', { gracePeriodSeconds: 5 }, ctx());
    t.is(shorter.object.metadata.deletionTimestamp, '2025-03-01T12:00:05Z');
    t.is(shorter.object.metadata.deletionGracePeriodSeconds, 5);
    t.true((await f.store.delete(pods, NS, 'bound', { gracePeriodSeconds: 0 }, ctx())).gone);

    await f.store.create(pods, NS, pod('pending'), ctx());
    t.true((await f.store.delete(pods, NS, 'pending', {}, ctx())).gone);
    t.is((await apiError(() => f.store.get(pods, NS, 'pending'))).code, 404);
  }));

test('propagation policies add or drop the garbage collector finalizers; preconditions must hold', (t) =>
  withStore(async (f) => {
    const c = await f.store.create(cms(f), NS, configMap('a', { finalizers: ['example.com/hold'] }), ctx());
    const uid = await apiError(() => f.store.delete(cms(f), NS, 'a', { preconditions: { uid: 'x' } }, ctx()));
    t.is(uid.code, 409);
    t.is(uid.message, `Precondition failed: UID in precondition: x, UID in object meta: ${c.metadata.uid}`);
    const rv = await apiError(() => f.store.delete(cms(f), NS, 'a', { preconditions: { resourceVersion: '999' } }, ctx()));
    t.is(rv.code, 409);
    t.is(rv.message, `Precondition failed: ResourceVersion in precondition: 999, ResourceVersion in object meta: ${c.metadata.resourceVersion}`);
    const orphan = await f.store.delete(cms(f), NS, 'a', { propagationPolicy: 'Orphan' }, ctx());
    t.deepEqual(orphan.object.metadata.finalizers, ['example.com/hold', 'orphan']);
    const bg = await f.store.delete(cms(f), NS, 'a', { orphanDependents: false }, ctx());
    t.deepEqual(bg.object.metadata.finalizers, ['example.com/hold']);
    await f.store.create(cms(f), NS, configMap('b'), ctx());
    const fg = await f.store.delete(cms(f), NS, 'b', { propagationPolicy: 'Foreground' }, ctx());
    t.false(fg.gone);
    t.deepEqual(fg.object.metadata.finalizers, ['foregroundDeletion']);
  }));

test('a deleted namespace turns Terminating, stays while spec.finalizers hold it, and only remove() takes it away', (t) =>
  withStore(async (f) => {
    const nss = f.type('namespaces');
    await f.store.create(nss, '', { metadata: { name: 'team', finalizers: ['example.com/x'] } }, ctx());
    const d = await f.store.delete(nss, '', 'team', {}, ctx());
    t.false(d.gone);
    t.is((d.object.status as { phase: string }).phase, 'Terminating');
    // Taking the last metadata finalizer off does not remove a namespace (its controller does).
    const { object } = await f.store.update(nss, '', 'team', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), ctx());
    t.deepEqual(object.metadata.finalizers ?? [], []);
    t.truthy((await f.store.get(nss, '', 'team')).metadata.deletionTimestamp);
    await f.store.remove(nss, '', 'team', object.metadata.resourceVersion);
    t.is((await apiError(() => f.store.get(nss, '', 'team'))).code, 404);
    await f.store.remove(nss, '', 'team'); // already gone: no error
  }));

test('delete of a missing object is 404; remove with a stale resourceVersion is 409', (t) =>
  withStore(async (f) => {
    t.is((await apiError(() => f.store.delete(cms(f), NS, 'nope', {}, ctx()))).code, 404);
    const c = await f.store.create(cms(f), NS, configMap('a'), ctx());
    await f.store.update(cms(f), NS, 'a', (cur) => ({ ...cur!, data: { k: 'w' } }), ctx());
    const err = await apiError(() => f.store.remove(cms(f), NS, 'a', c.metadata.resourceVersion));
    t.is(err.code, 409);
    t.truthy(await f.store.get(cms(f), NS, 'a'));
  }));
