/**
 * The ResourceQuota and LimitRanger admission plugins in a real chain over a real store (the
 * quota's status set as the controller would): charges, upstream's refusals, the charge given
 * back when a later plugin or the store refuses the write (Appendix B), dry runs, racing charges,
 * LimitRange defaults and bounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { AdmissionChain, type AdmissionPlugin } from '../../../../apiserver/admission/admission';
import { LimitRanger } from '../../../../apiserver/admission/limit-ranger';
import { ResourceQuotaAdmission } from '../../../../apiserver/admission/resource-quota';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { makeBuiltinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { ObjectStore, type WriteContext } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';
import { storeQuotaAccess } from '../../../../apiserver/wiring/admission';

const admin: WriteContext = { user: { username: 'admin', groups: ['system:masters'] }, dryRun: false, subresource: '' };
const everything = { labelSelector: [], fieldSelector: [] };

interface H {
  store: ObjectStore;
  t(resource: string): ResourceType;
  used(name?: string): Promise<Record<string, string>>;
  createPod(name: string, o?: { resources?: unknown; dryRun?: boolean; badName?: boolean }): Promise<KObject>;
}

async function withChain(extra: AdmissionPlugin[], body: (h: H) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-quota-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 60_000, now: Date.now });
  const registry = new ResourceRegistry();
  for (const ty of makeBuiltinTypes()) registry.register(ty);
  const t = (resource: string) => registry.lookup('', 'v1', resource)!;
  let store: ObjectStore | undefined;
  const plugins: AdmissionPlugin[] = [
    new LimitRanger(async (ns) => (await store!.list(t('limitranges'), ns, everything)).items),
    new ResourceQuotaAdmission(storeQuotaAccess(() => store!, t('resourcequotas'))),
    ...extra,
  ];
  store = new ObjectStore(storage, cache, new AdmissionChain(plugins), { now: () => new Date(), rvWaitMs: 2000 });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  await cache.whenReady();
  const h: H = {
    store,
    t,
    async used(name = 'q') {
      return ((await store.get(t('resourcequotas'), 'ns', name)).status as { used: Record<string, string> }).used;
    },
    createPod: (name, o = {}) =>
      store.create(
        t('pods'),
        'ns',
        { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: o.badName ? 'Bad_Name' : 'app', image: 'x', ...(o.resources ? { resources: o.resources } : {}) }] } },
        { ...admin, dryRun: !!o.dryRun },
      ),
  };
  try {
    await body(h);
  } finally {
    ac.abort();
    await running.catch(() => undefined);
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A quota with its status as the controller sets it. */
async function quota(h: H, hard: Record<string, string>, used: Record<string, string>, name = 'q', spec: Record<string, unknown> = {}): Promise<void> {
  await h.store.create(h.t('resourcequotas'), 'ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...spec } }, admin);
  await h.store.update(h.t('resourcequotas'), 'ns', name, (cur) => ({ ...cur!, status: { hard, used } }), { ...admin, subresource: 'status' });
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the write was admitted');
};

test('a create is charged to the quota; at the limit it is refused 403 with upstream\'s message', (t) =>
  withChain([], async (h) => {
    await quota(h, { pods: '2', 'requests.cpu': '1' }, { pods: '0', 'requests.cpu': '0' });
    await h.createPod('a', { resources: { requests: { cpu: '300m' } } });
    await h.createPod('b', { resources: { requests: { cpu: '300m' } } });
    const r = await refusal(h.createPod('c', { resources: { requests: { cpu: '300m' } } }));
    t.is(r.code, 403);
    t.is(r.message, 'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2 (admission plugin ResourceQuota)');
    t.deepEqual(await h.used(), { pods: '2', 'requests.cpu': '600m' });
  }));

test('Appendix B: the charge is given back when the store refuses the write (invalid) or a later plugin does', async (t) => {
  const deny: AdmissionPlugin = {
    name: 'Later',
    validate: (a) => (a.object?.metadata.name === 'denied' ? Promise.reject(new ApiError('Forbidden', 'no')) : Promise.resolve()),
  };
  await withChain([deny], async (h) => {
    await quota(h, { pods: '5' }, { pods: '1' });
    t.is((await refusal(h.createPod('invalid', { badName: true }))).code, 422);
    t.deepEqual(await h.used(), { pods: '1' });
    t.is((await refusal(h.createPod('denied'))).code, 403);
    t.deepEqual(await h.used(), { pods: '1' });
    // An existing name: the store refuses the create (409) after admission charged it.
    await h.createPod('dup');
    t.deepEqual(await h.used(), { pods: '2' });
    t.is((await refusal(h.createPod('dup'))).code, 409);
    t.deepEqual(await h.used(), { pods: '2' });
  });
});

test('a dry run is checked but not charged; racing creates are serialised by the quota\'s version', async (t) => {
  await withChain([], async (h) => {
    await quota(h, { pods: '3' }, { pods: '1' });
    await h.createPod('dry', { dryRun: true });
    t.deepEqual(await h.used(), { pods: '1' });
    const results = await Promise.allSettled(['r1', 'r2', 'r3'].map((n) => h.createPod(n)));
    t.is(results.filter((r) => r.status === 'fulfilled').length, 2);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    t.regex((refused.reason as Error).message, /exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3/);
    t.deepEqual(await h.used(), { pods: '3' });
  });
});

test('every matching quota is charged; a quota whose usage is not counted yet refuses', async (t) => {
  await withChain([], async (h) => {
    await quota(h, { pods: '5' }, { pods: '0' }, 'a');
    await quota(h, { 'count/pods': '5', secrets: '1' }, { 'count/pods': '2', secrets: '0' }, 'b');
    await h.createPod('p');
    t.deepEqual(await h.used('a'), { pods: '1' });
    t.deepEqual(await h.used('b'), { 'count/pods': '3', secrets: '0' });
    await h.store.create(h.t('resourcequotas'), 'ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'c' }, spec: { hard: { pods: '1' } } }, admin);
    await h.store.update(h.t('resourcequotas'), 'ns', 'c', (cur) => ({ ...cur!, status: { hard: { pods: '1' } } }), { ...admin, subresource: 'status' });
    t.regex((await refusal(h.createPod('q'))).message, /status unknown for quota: c, resources: pods/);
  });
});

test('LimitRanger: defaults with the annotation, then the bounds of Container and Pod items, all violations listed', async (t) => {
  await withChain([], async (h) => {
    const lr = { type: 'Container', max: { cpu: '1', memory: '1Gi' }, min: { cpu: '50m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '5' } };
    await h.store.create(h.t('limitranges'), 'ns', { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l' }, spec: { limits: [lr, { type: 'Pod', max: { memory: '1536Mi' } }] } }, admin);
    const p = await h.createPod('plain', { resources: { limits: { memory: '256Mi' } } });
    const c = (p.spec as { containers: Array<{ resources: unknown }> }).containers[0];
    // memory's request follows its limit (pod defaulting), cpu's come from the LimitRange (max defaulted the memory limit only where unset).
    t.deepEqual(c.resources, { limits: { memory: '256Mi', cpu: '500m' }, requests: { memory: '256Mi', cpu: '100m' } });
    t.is(p.metadata.annotations?.['svc.io/limit-ranger'], 'LimitRanger plugin set: cpu request for container app; cpu limit for container app');

    const r = await refusal(h.createPod('bad', { resources: { requests: { cpu: '10m', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } } }));
    t.is(r.code, 403);
    t.is(
      r.message,
      'pods "bad" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 5, but provided ratio is 200.000000, maximum memory usage per Pod is 1536Mi, but limit is 2Gi] (admission plugin LimitRanger)',
    );
  });
});

test('LimitRanger: a claim\'s storage request within the PersistentVolumeClaim item', async (t) => {
  await withChain([], async (h) => {
    await h.store.create(h.t('limitranges'), 'ns', { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l' }, spec: { limits: [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }] } }, admin);
    const claim = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    await h.store.create(h.t('persistentvolumeclaims'), 'ns', claim('ok', '5Gi'), admin);
    t.regex((await refusal(h.store.create(h.t('persistentvolumeclaims'), 'ns', claim('small', '500Mi'), admin))).message, /minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi/);
    t.regex((await refusal(h.store.create(h.t('persistentvolumeclaims'), 'ns', claim('big', '20Gi'), admin))).message, /maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi/);
  });
});
