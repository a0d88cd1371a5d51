/**
 * The official JavaScript client, @kubernetes/client-node 1.x, unchanged against a real
 * svc-apiserver through its admin kubeconfig (issue 17: stock clients): the typed APIs create,
 * read, list, replace and delete under upstream's group names, and its Watch follows a collection.
 */
import test from 'ava';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

let api: RunningApiServer;
let k8s: typeof K8s;
let kc: K8s.KubeConfig;

test.before(async () => {
  // The client is an ES module: loaded with import(), which the CommonJS tests keep as is (module node16).
  k8s = await import('@kubernetes/client-node');
  api = await startApiServer();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(api.kubeconfig);
});

test.after.always(async () => {
  await api?.stop();
});

test.serial('CoreV1Api: namespace and config map created, read, listed, replaced and deleted', async (t) => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ns = await core.createNamespace({ body: { metadata: { name: 'js-client' } } });
  t.is(ns.metadata?.name, 'js-client');
  const created = await core.createNamespacedConfigMap({ namespace: 'js-client', body: { metadata: { name: 'settings' }, data: { color: 'blue' } } });
  t.is(created.data?.color, 'blue');
  const read = await core.readNamespacedConfigMap({ namespace: 'js-client', name: 'settings' });
  t.is(read.metadata?.uid, created.metadata?.uid);
  const replaced = await core.replaceNamespacedConfigMap({ namespace: 'js-client', name: 'settings', body: { ...read, data: { color: 'green' } } });
  t.is(replaced.data?.color, 'green');
  const list = await core.listNamespacedConfigMap({ namespace: 'js-client' });
  t.deepEqual(
    list.items.map((c) => c.metadata?.name).filter((n) => n === 'settings'),
    ['settings'],
  );
  await core.deleteNamespacedConfigMap({ namespace: 'js-client', name: 'settings' });
  const gone = await core.readNamespacedConfigMap({ namespace: 'js-client', name: 'settings' }).catch((err: { code?: number }) => err);
  t.is((gone as { code?: number }).code, 404);
});

test.serial('RbacAuthorizationV1Api and CoordinationV1Api under the k8s.io group names', async (t) => {
  const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const role = await rbac.createNamespacedRole({
    namespace: 'default',
    body: { metadata: { name: 'js-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] },
  });
  t.is(role.metadata?.name, 'js-reader');
  const roles = await rbac.listNamespacedRole({ namespace: 'default' });
  t.true(roles.items.some((r) => r.metadata?.name === 'js-reader'));
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const lease = await coordination.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'js-lease' }, spec: { holderIdentity: 'js', leaseDurationSeconds: 10 } } });
  t.is(lease.spec?.holderIdentity, 'js');
});

test.serial('Watch follows a collection: ADDED, MODIFIED and DELETED of a config map', async (t) => {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const seen: string[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const watch = new k8s.Watch(kc);
  const controller = await watch.watch(
    '/api/v1/namespaces/default/configmaps',
    { fieldSelector: 'metadata.name=watched' },
    (phase) => {
      seen.push(phase);
      if (phase === 'DELETED') done();
    },
    () => undefined,
  );
  try {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'watched' }, data: { a: '1' } } });
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'watched' });
    await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'watched', body: { ...cm, data: { a: '2' } } });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'watched' });
    await all;
    t.deepEqual(seen, ['ADDED', 'MODIFIED', 'DELETED']);
  } finally {
    controller.abort();
  }
});
