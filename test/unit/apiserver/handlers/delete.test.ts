import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { handleDelete, handleDeleteCollection } from '../../../../apiserver/handlers/delete';
import { objectKey } from '../../../../apiserver/store/keys';
import { admin, configMap, type StoreFixture, withStore } from '../store/fixture';
import { call } from './fake-http';

const CMS = '/api/v1/namespaces/default/configmaps';

const gone = async (f: StoreFixture, name: string) =>
  f.store.get(f.type('configmaps'), 'default', name).then(
    () => false,
    (err: unknown) => err instanceof ApiError && err.code === 404,
  );

test('DELETE of an object that goes answers a Success Status naming it', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const res = await call(f, handleDelete, 'DELETE', `${CMS}/a`);
    t.is(res.statusCode, 200);
    t.deepEqual(res.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'a', kind: 'configmaps', uid: a.metadata.uid } });
    t.true(await gone(f, 'a'));
    const again = await call(f, handleDelete, 'DELETE', `${CMS}/a`);
    t.is(again.statusCode, 404);
    t.like(again.body, { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  }));

test('DELETE of an object held by finalizers answers the terminating object', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    const res = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' } });
    t.is(res.statusCode, 200);
    t.is(res.body.kind, 'ConfigMap');
    t.is(res.body.metadata.deletionTimestamp, '2025-03-01T12:00:00Z');
    t.deepEqual(res.body.metadata.finalizers, ['example.com/hold', 'orphan']);
    t.false(await gone(f, 'a'));
  }));

test('DeleteOptions: preconditions must hold; bad values and kinds are 400', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a'), admin);
    const pre = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { preconditions: { uid: 'other' } } });
    t.is(pre.statusCode, 409);
    t.regex(pre.body.message, /^Precondition failed: UID in precondition: other/);
    const cases: Array<[string, unknown, RegExp]> = [
      [`${CMS}/a?propagationPolicy=Sometimes`, undefined, /^propagationPolicy: Unsupported value: "Sometimes"/],
      [`${CMS}/a?gracePeriodSeconds=soon`, undefined, /^gracePeriodSeconds: Invalid value: "soon"/],
      [`${CMS}/a?orphanDependents=true&propagationPolicy=Orphan`, undefined, /cannot set both orphanDependents and propagationPolicy/],
      [`${CMS}/a`, { kind: 'Pod' }, /does not match the expected kind \(DeleteOptions\)/],
      [`${CMS}/a`, [1, 2], /^DeleteOptions must be an object$/],
      [`${CMS}/a`, { ignoreStoreReadErrorWithClusterBreakingPotential: true }, /AllowUnsafeMalformedObjectDeletion feature gate is not enabled/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call(f, handleDelete, 'DELETE', path, { body });
      t.is(res.statusCode, 400, path);
      t.regex(res.body.message, message);
    }
    t.false(await gone(f, 'a'));
  }));

test('unsafe deletion: needs its verb, refuses a readable object, removes an undecodable one', (t) =>
  withStore(async (f) => {
    const gates = new Set(['AllowUnsafeMalformedObjectDeletion']);
    const body = { ignoreStoreReadErrorWithClusterBreakingPotential: true };
    const verbs: string[] = [];
    const authorizeVerb = (v: string) => {
      verbs.push(v);
      return Promise.resolve();
    };
    await f.store.create(f.type('configmaps'), 'default', configMap('fine'), admin);
    const readable = await call(f, handleDelete, 'DELETE', `${CMS}/fine`, { body, gates, authorizeVerb });
    t.is(readable.statusCode, 400);
    t.regex(readable.body.message, /the object can be read; delete it normally/);
    t.false(await gone(f, 'fine'));

    await f.storage.create(objectKey(f.type('configmaps'), 'default', 'broken'), Buffer.from('{oops'));
    const denied = await call(f, handleDelete, 'DELETE', `${CMS}/broken`, { body, gates, authorizeVerb: async () => Promise.reject(new ApiError('Forbidden', 'no')) });
    t.is(denied.statusCode, 403);
    const res = await call(f, handleDelete, 'DELETE', `${CMS}/broken`, { body, gates, authorizeVerb });
    t.is(res.statusCode, 200);
    t.like(res.body, { kind: 'Status', status: 'Success', details: { name: 'broken', kind: 'configmaps' } });
    t.deepEqual(verbs, ['unsafe-delete-ignore-read-errors', 'unsafe-delete-ignore-read-errors']);
    t.is(await f.storage.get(objectKey(f.type('configmaps'), 'default', 'broken')), null);
  }));

test('DELETE collection deletes what the selector matches and answers the list of it', (t) =>
  withStore(async (f) => {
    for (const [name, app] of [['a', 'web'], ['b', 'db'], ['c', 'web']]) {
      await f.store.create(f.type('configmaps'), 'default', configMap(name, { labels: { app } }), admin);
    }
    const res = await call(f, handleDeleteCollection, 'DELETE', `${CMS}?labelSelector=app%3Dweb`);
    t.is(res.statusCode, 200);
    t.is(res.body.kind, 'ConfigMapList');
    t.deepEqual(res.body.items.map((o: { metadata: { name: string } }) => o.metadata.name), ['a', 'c']);
    t.true(await gone(f, 'a'));
    t.false(await gone(f, 'b'));
    t.true(await gone(f, 'c'));
    const dry = await call(f, handleDeleteCollection, 'DELETE', `${CMS}?dryRun=All`);
    t.is(dry.body.items.length, 1);
    t.false(await gone(f, 'b'));
  }));

test('gracePeriodSeconds is an int64 whose deadline must be a date: beyond it a 400, never a 500', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    const cases: Array<[string, unknown, RegExp]> = [
      [`${CMS}/a?gracePeriodSeconds=99999999999999999999`, undefined, /^gracePeriodSeconds: Invalid value: "99999999999999999999": must be between -9223372036854775808 and 9223372036854775807$/],
      [`${CMS}/a?gracePeriodSeconds=9223372036854775807`, undefined, /^gracePeriodSeconds: Invalid value: "9223372036854775807": must be at most 9223372036 /],
      [`${CMS}/a?gracePeriodSeconds=1.5`, undefined, /^gracePeriodSeconds: Invalid value: "1.5": must be an integer$/],
      [`${CMS}/a`, { gracePeriodSeconds: 1e20 }, /^gracePeriodSeconds: Invalid value: "100000000000000000000"/],
      [`${CMS}/a`, { gracePeriodSeconds: 1e300 }, /^gracePeriodSeconds: Invalid value: "1e\+300": must be an integer$/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call(f, handleDelete, 'DELETE', path, { body });
      t.is(res.statusCode, 400, path);
      t.regex(res.body.message, message, path);
    }
    // The longest grace period upstream's time.Duration holds is still a valid deadline.
    const longest = await call(f, handleDelete, 'DELETE', `${CMS}/a?gracePeriodSeconds=9223372036`);
    t.is(longest.statusCode, 200);
    t.is(longest.body.metadata.deletionGracePeriodSeconds, 9223372036);
    t.is(longest.body.metadata.deletionTimestamp, '2317-06-11T11:47:16Z');
  }));

test('every write option of the DeleteOptions body counts: dryRun (kubectl delete --dry-run=server), grace period, preconditions, policy', (t) =>
  withStore(async (f) => {
    const a = await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    // kubectl 1.32's body for `kubectl delete cm a --dry-run=server`.
    const dry = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { propagationPolicy: 'Background', dryRun: ['All'] } });
    t.is(dry.statusCode, 200);
    t.truthy(dry.body.metadata.deletionTimestamp, 'answers what the delete would do');
    const still = await f.store.get(f.type('configmaps'), 'default', 'a');
    t.is(still.metadata.deletionTimestamp, undefined, 'a dry run changes nothing');
    t.is(still.metadata.resourceVersion, a.metadata.resourceVersion);
    const badDry = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { dryRun: ['Some'] } });
    t.is(badDry.statusCode, 400);
    t.is(badDry.body.message, 'dryRun: Unsupported value: "Some": supported values: "All"');
    const notList = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { dryRun: 'All' } });
    t.is(notList.statusCode, 400);
    t.regex(notList.body.message, /^dryRun: Invalid value: "All": must be a list of strings$/);
    // preconditions.resourceVersion from the body.
    const stale = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { preconditions: { resourceVersion: '12345' } } });
    t.is(stale.statusCode, 409);
    t.regex(stale.body.message, /^Precondition failed: ResourceVersion in precondition: 12345, ResourceVersion in object meta: /);
    const wrongType = await call(f, handleDelete, 'DELETE', `${CMS}/a`, { body: { preconditions: { uid: 7 } } });
    t.is(wrongType.statusCode, 400);
    t.regex(wrongType.body.message, /^preconditions\.uid: Invalid value: 7: must be a string$/);
    // gracePeriodSeconds and propagationPolicy from the body, with matching preconditions.
    const res = await call(f, handleDelete, 'DELETE', `${CMS}/a`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 30, propagationPolicy: 'Orphan', preconditions: { uid: a.metadata.uid, resourceVersion: a.metadata.resourceVersion } },
    });
    t.is(res.statusCode, 200);
    t.is(res.body.metadata.deletionGracePeriodSeconds, 30);
    t.deepEqual(res.body.metadata.finalizers, ['example.com/hold', 'orphan']);
  }));

test('a DeleteOptions body that contradicts the query is a 400 naming the option; the same value in both is fine', (t) =>
  withStore(async (f) => {
    await f.store.create(f.type('configmaps'), 'default', configMap('a', { finalizers: ['example.com/hold'] }), admin);
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [`${CMS}/a?gracePeriodSeconds=0`, { gracePeriodSeconds: 30 }, /^gracePeriodSeconds: Invalid value: "0": the query parameter contradicts the request body's DeleteOptions \(30\)$/],
      [`${CMS}/a?propagationPolicy=Orphan`, { propagationPolicy: 'Foreground' }, /^propagationPolicy: Invalid value: "Orphan": the query parameter contradicts the request body's DeleteOptions \("Foreground"\)$/],
      [`${CMS}/a?orphanDependents=true`, { orphanDependents: false }, /^orphanDependents: Invalid value: "true": the query parameter contradicts the request body's DeleteOptions \(false\)$/],
      [`${CMS}/a?orphanDependents=True`, { propagationPolicy: 'Background' }, /cannot set both orphanDependents and propagationPolicy/],
      [`${CMS}/a`, { orphanDependents: 'true' }, /^orphanDependents: Invalid value: "true": must be a boolean$/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call(f, handleDelete, 'DELETE', path, { body });
      t.is(res.statusCode, 400, path);
      t.regex(res.body.message, message, path);
    }
    t.is((await f.store.get(f.type('configmaps'), 'default', 'a')).metadata.deletionTimestamp, undefined, 'nothing was deleted');
    const same = await call(f, handleDelete, 'DELETE', `${CMS}/a?gracePeriodSeconds=30&orphanDependents=1`, { body: { gracePeriodSeconds: 30, orphanDependents: true } });
    t.is(same.statusCode, 200);
    t.is(same.body.metadata.deletionGracePeriodSeconds, 30);
    t.true(same.body.metadata.finalizers.includes('orphan'));
  }));

test("orphanDependents in the query is a boolean as Go spells it: the Python client's True orphans", (t) =>
  withStore(async (f) => {
    for (const [name, v, orphan] of [['a', 'True', true], ['b', 'T', true], ['c', '1', true], ['d', 'False', false], ['e', 'false', false]] as const) {
      await f.store.create(f.type('configmaps'), 'default', configMap(name, { finalizers: ['example.com/hold'] }), admin);
      const res = await call(f, handleDelete, 'DELETE', `${CMS}/${name}?orphanDependents=${v}`);
      t.is(res.statusCode, 200, v);
      t.is(res.body.metadata.finalizers.includes('orphan'), orphan, v);
    }
    const bad = await call(f, handleDelete, 'DELETE', `${CMS}/a?orphanDependents=yes`);
    t.is(bad.statusCode, 400);
    t.regex(bad.body.message, /^orphanDependents: invalid boolean "yes"/);
  }));

test('DELETE collection honours dryRun in the body', (t) =>
  withStore(async (f) => {
    for (const name of ['a', 'b']) await f.store.create(f.type('configmaps'), 'default', configMap(name), admin);
    const dry = await call(f, handleDeleteCollection, 'DELETE', CMS, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] } });
    t.is(dry.statusCode, 200);
    t.is(dry.body.items.length, 2);
    t.false(await gone(f, 'a'));
    t.false(await gone(f, 'b'));
  }));

test('DELETE of a batch/v1 Job without a propagation policy orphans its pods and warns, as upstream; an explicit policy does not warn', (t) =>
  withStore(async (f) => {
    const jobs = f.type('jobs', 'batch', 'v1');
    const job = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } });
    await f.store.create(jobs, 'default', job('a'), admin);
    await f.store.create(jobs, 'default', job('b'), admin);
    const res = await call(f, handleDelete, 'DELETE', '/apis/batch/v1/namespaces/default/jobs/a');
    t.is(res.statusCode, 200);
    t.deepEqual(res.body.metadata.finalizers, ['orphan']);
    t.deepEqual(res.headers['warning'], ['299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"']);
    const background = await call(f, handleDelete, 'DELETE', '/apis/batch/v1/namespaces/default/jobs/b', { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' } });
    t.is(background.body.kind, 'Status');
    t.false('warning' in background.headers);
  }));
