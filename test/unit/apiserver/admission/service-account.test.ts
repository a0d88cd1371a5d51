import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { ServiceAccountAdmission, TOKEN_MOUNT_PATH, tokenVolume } from '../../../../apiserver/admission/service-account';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';

const pods = { group: '', resource: 'pods', namespaced: true } as ResourceType;
const pod = (sa: string, annotations?: Record<string, string>): KObject => ({ metadata: { name: 'p', namespace: 'ns', annotations }, spec: { serviceAccountName: sa, containers: [] } });
const attrs = (o: KObject, op: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes => ({ operation: op, type: pods, namespace: 'ns', name: 'p', subresource: '', object: o, user: { username: 'u', groups: [] }, dryRun: false });

test('existing account passes; missing one is refused with 403', async (t) => {
  const plugin = new ServiceAccountAdmission((_ns, name) => Promise.resolve(name === 'builder' ? { metadata: { name } } : null), { defaultRetries: 3, retryDelayMs: 0 });
  await t.notThrowsAsync(plugin.validate(attrs(pod('builder'))));
  const err = await t.throwsAsync(plugin.validate(attrs(pod('ghost'))));
  t.is((err as { code?: number }).code, 403);
  t.regex(err.message, /error looking up service account ns\/ghost: serviceaccount "ghost" not found/);
});

test('the default account is looked up again while the controller creates it', async (t) => {
  let calls = 0;
  const sleeps: number[] = [];
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(++calls >= 3 ? { metadata: { name: 'default' } } : null), { defaultRetries: 10, retryDelayMs: 150, sleep: (ms) => (sleeps.push(ms), Promise.resolve()) });
  await t.notThrowsAsync(plugin.validate(attrs(pod('default'))));
  t.is(calls, 3);
  t.deepEqual(sleeps, [150, 150]);
  let n = 0;
  const never = new ServiceAccountAdmission(() => (n++, Promise.resolve(null)), { defaultRetries: 4, retryDelayMs: 0, sleep: () => Promise.resolve() });
  await t.throwsAsync(never.validate(attrs(pod('default'))));
  t.is(n, 4);
});

test('mirror pods may not name a service account (not even default), reference secrets or project a token; updates and other kinds are not checked', async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(null), { defaultRetries: 1, retryDelayMs: 0 });
  await t.notThrowsAsync(plugin.validate(attrs(pod('', { 'svc.io/config.mirror': 'x' }))));
  await t.throwsAsync(plugin.validate(attrs(pod('default', { 'svc.io/config.mirror': 'x' }))), { message: /mirror pod may not reference service accounts/ });
  await t.throwsAsync(plugin.validate(attrs(pod('builder', { 'svc.io/config.mirror': 'x' }))), { message: /mirror pod may not reference service accounts/ });
  // The annotation's presence makes a mirror pod, whatever its value (upstream).
  await t.throwsAsync(plugin.validate(attrs(pod('default', { 'svc.io/config.mirror': '' }))), { message: /mirror pod may not reference service accounts/ });
  const withSpec = (spec: Record<string, unknown>) => ({ ...pod('', { 'svc.io/config.mirror': 'x' }), spec: { containers: [], ...spec } });
  const secretEnv = withSpec({ containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] });
  await t.throwsAsync(plugin.validate(attrs(secretEnv)), { message: /mirror pod may not reference secrets/ });
  const projectedToken = withSpec({ volumes: [{ name: 'v', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } }] });
  const err = await t.throwsAsync(plugin.validate(attrs(projectedToken)), { message: /mirror pod may not use service account token volume projection/ });
  t.is((err as { code?: number }).code, 403);
  await t.notThrowsAsync(plugin.validate(attrs(pod('ghost'), 'UPDATE')));
  await t.notThrowsAsync(plugin.validate({ ...attrs(pod('ghost')), type: { group: '', resource: 'configmaps' } as ResourceType }));
});

// ---- token volume (mutating phase) ----

const account = (extra: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'default', namespace: 'ns' }, ...extra });
const seq = () => {
  let i = 0;
  return (n: number) => i++ % n;
};
const fullPod = (spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KObject => ({
  metadata: { name: 'p', namespace: 'ns', annotations },
  spec: {
    serviceAccountName: 'default',
    initContainers: [{ name: 'init', image: 'i' }],
    containers: [
      { name: 'a', image: 'i', volumeMounts: [{ name: 'data', mountPath: '/data' }] },
      { name: 'b', image: 'i', volumeMounts: [{ name: 'own', mountPath: TOKEN_MOUNT_PATH }] },
    ],
    volumes: [{ name: 'data', emptyDir: {} }, { name: 'own', emptyDir: {} }],
    ...spec,
  },
});
const specOf = (o: KObject) => o.spec as { volumes: Record<string, any>[]; containers: Record<string, any>[]; initContainers: Record<string, any>[] };

test('adds the projected token volume and mounts it read-only where the path is free', async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(account()), { defaultRetries: 1, retryDelayMs: 0, random: seq() });
  const p = fullPod();
  await plugin.mutate(attrs(p));
  const s = specOf(p);
  t.is(s.volumes.length, 3);
  const v = s.volumes[2];
  t.is(v.name, 'kube-api-access-bcdfg', 'upstream prefix and 5 characters of its alphabet');
  t.deepEqual(v, tokenVolume('kube-api-access-bcdfg'));
  t.deepEqual(v.projected.sources, [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ]);
  t.is(v.projected.defaultMode, 0o644);
  const mount = { name: 'kube-api-access-bcdfg', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
  t.deepEqual(s.initContainers[0].volumeMounts, [mount]);
  t.deepEqual(s.containers[0].volumeMounts, [{ name: 'data', mountPath: '/data' }, mount]);
  t.deepEqual(s.containers[1].volumeMounts, [{ name: 'own', mountPath: TOKEN_MOUNT_PATH }], 'an existing mount at the path is kept');

  // Idempotent: a second run (conflict retry) changes nothing.
  const before = JSON.stringify(p);
  await plugin.mutate(attrs(p));
  t.is(JSON.stringify(p), before);
});

test('no volume when every container already mounts the path, and none when automount is off', async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(account()), { defaultRetries: 1, retryDelayMs: 0 });
  const p = fullPod({ initContainers: [], containers: [{ name: 'b', image: 'i', volumeMounts: [{ name: 'own', mountPath: TOKEN_MOUNT_PATH }] }] });
  await plugin.mutate(attrs(p));
  t.is(specOf(p).volumes.length, 2);

  const off = fullPod({ automountServiceAccountToken: false });
  await plugin.mutate(attrs(off));
  t.is(specOf(off).volumes.length, 2);
  t.is(specOf(off).containers[0].volumeMounts.length, 1);

  // The account opts out; the pod's own true wins over it.
  const saOff = new ServiceAccountAdmission(() => Promise.resolve(account({ automountServiceAccountToken: false })), { defaultRetries: 1, retryDelayMs: 0 });
  const q = fullPod();
  await saOff.mutate(attrs(q));
  t.is(specOf(q).volumes.length, 2);
  const r = fullPod({ automountServiceAccountToken: true });
  await saOff.mutate(attrs(r));
  t.is(specOf(r).volumes.length, 3);
});

test('mirror pods, updates and other resources are never changed; a missing account is refused in mutate', async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(account()), { defaultRetries: 1, retryDelayMs: 0 });
  const mirror = fullPod({}, { 'svc.io/config.mirror': 'x' });
  await plugin.mutate(attrs(mirror));
  t.is(specOf(mirror).volumes.length, 2);
  const upd = fullPod();
  await plugin.mutate(attrs(upd, 'UPDATE'));
  t.is(specOf(upd).volumes.length, 2);
  const cm: KObject = { metadata: { name: 'c', namespace: 'ns' }, spec: { containers: [{ name: 'x' }] } };
  await plugin.mutate({ ...attrs(cm), type: { group: '', resource: 'configmaps' } as ResourceType });
  t.is((cm.spec as { volumes?: unknown }).volumes, undefined);

  const none = new ServiceAccountAdmission(() => Promise.resolve(null), { defaultRetries: 2, retryDelayMs: 0, sleep: () => Promise.resolve() });
  const err = await t.throwsAsync(none.mutate(attrs(fullPod())));
  t.is((err as { code?: number }).code, 403);
});

test('validate does not read the account again after mutate found it', async (t) => {
  let reads = 0;
  const plugin = new ServiceAccountAdmission(() => (reads++, Promise.resolve(account())), { defaultRetries: 1, retryDelayMs: 0 });
  const a = attrs(fullPod());
  await plugin.mutate(a);
  await plugin.validate(a);
  t.is(reads, 1);
});

test('a volume the client named with the prefix counts as the token volume', async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(account()), { defaultRetries: 1, retryDelayMs: 0 });
  const q = fullPod({ volumes: [{ name: 'data', emptyDir: {} }, { name: 'own', emptyDir: {} }, { name: 'kube-api-access-ccccc', emptyDir: {} }] });
  await plugin.mutate(attrs(q));
  t.is(specOf(q).volumes.length, 3);
  t.is(specOf(q).containers[0].volumeMounts[1].name, 'kube-api-access-ccccc');
});

test("a pod without image pull secrets gets its account's; its own are kept", async (t) => {
  const plugin = new ServiceAccountAdmission(() => Promise.resolve(account({ imagePullSecrets: [{ name: 'registry' }] })), { defaultRetries: 1, retryDelayMs: 0 });
  const p = fullPod({ automountServiceAccountToken: false });
  await plugin.mutate(attrs(p));
  t.deepEqual((p.spec as { imagePullSecrets?: unknown }).imagePullSecrets, [{ name: 'registry' }]);
  const own = fullPod({ imagePullSecrets: [{ name: 'mine' }] });
  await plugin.mutate(attrs(own));
  t.deepEqual((own.spec as { imagePullSecrets?: unknown }).imagePullSecrets, [{ name: 'mine' }]);
});
