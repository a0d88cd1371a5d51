/**
 * Static pods: manifests in staticPodPath run on the node, get mirror pods in the API (with their
 * status), are replaced when edited and stopped when removed; a deleted mirror pod comes back.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { podsResource } from '../../../../agent/pod/config-objects';
import type { Pod } from '../../../../agent/api/core-v1';
import { CONFIG_HASH, isMirrorPod, staticPodFromManifest } from '../../../../agent/pod/static-pod-source';
import { MIRROR_POD_ANNOTATION as CONFIG_MIRROR } from '../../../../apiserver/api/well-known';
import { BUSYBOX, isRunningReady, NODE, startHarness } from './harness';

const manifest = (image: string) => `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: app
    image: ${image}
    imagePullPolicy: IfNotPresent
`;

test('parsing: a manifest becomes this node\'s pod with a stable hashed uid; JSON works; bad manifests are refused with a reason', (t) => {
  const a = staticPodFromManifest(manifest(BUSYBOX), '/etc/pods/web.yaml', NODE);
  t.is(a.metadata.name, `web-${NODE}`);
  t.is(a.metadata.namespace, 'default');
  t.is(a.spec.nodeName, NODE);
  t.is(a.spec.restartPolicy, 'Always');
  t.regex(a.metadata.uid!, /^[0-9a-f]{32}$/);
  t.is(a.metadata.annotations?.[CONFIG_HASH], a.metadata.uid);
  t.is(staticPodFromManifest(manifest(BUSYBOX), '/etc/pods/web.yaml', NODE).metadata.uid, a.metadata.uid);
  t.not(staticPodFromManifest(manifest('svc.local/other:1'), '/etc/pods/web.yaml', NODE).metadata.uid, a.metadata.uid);
  t.not(staticPodFromManifest(manifest(BUSYBOX), '/etc/pods/web.yaml', 'node-2').metadata.uid, a.metadata.uid);
  const json = staticPodFromManifest(JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'j', namespace: 'kube' }, spec: { containers: [{ name: 'c', image: BUSYBOX }] } }), '/x.json', NODE);
  t.is(json.metadata.name, `j-${NODE}`);
  t.is(json.metadata.namespace, 'kube');
  t.throws(() => staticPodFromManifest('kind: Deployment\nmetadata: {name: x}\n', '/x', NODE), { message: /not "Pod"/ });
  t.throws(() => staticPodFromManifest('kind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n', '/x', NODE), { message: /at least one container/ });
  t.throws(() => staticPodFromManifest('kind: Pod\nspec: {containers: [{name: c, image: i}]}\n', '/x', NODE), { message: /metadata.name/ });
});

test('a manifest runs as a static pod with a mirror pod that carries its status; editing replaces it; removing stops it and deletes the mirror', async (t) => {
  const h = await startHarness({
    manager: (root) => ({ staticPodPath: path.join(root, 'manifests'), fileCheckFrequencyMs: 1000, mirrorPeriodMs: 1000 }),
    prepare: async (root) => {
      const dir = path.join(root, 'manifests');
      await mkdir(dir);
      await writeFile(path.join(dir, 'web.yaml'), manifest(BUSYBOX));
      await writeFile(path.join(dir, 'broken.yaml'), 'kind: Pod\nmetadata: [\n');
      await writeFile(path.join(dir, '.hidden.yaml'), manifest('svc.local/hidden:1'));
    },
  });
  const dir = path.join(h.root, 'manifests');
  const name = `web-${NODE}`;
  try {
    t.true(await h.until(() => isRunningReady(h.status(name))), 'the mirror pod shows the static pod running');
    const mirror = h.pod(name)!;
    t.true(isMirrorPod(mirror));
    const first = staticPodFromManifest(manifest(BUSYBOX), path.join(dir, 'web.yaml'), NODE);
    t.is(mirror.metadata.annotations?.[CONFIG_MIRROR], first.metadata.uid);
    t.not(mirror.metadata.uid, first.metadata.uid, 'the mirror has its own API uid');
    t.deepEqual(mirror.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: 'node-uid-1', controller: true }]);
    t.is(mirror.metadata.labels?.['app'], 'web');
    t.truthy(h.log.find('skipping static pod manifest').find((l) => String(l.obj['file']).endsWith('broken.yaml')));
    t.is((await h.sim.listPodSandbox()).length, 1, 'hidden files are ignored');
    // The runtime knows the static pod by its own uid.
    t.is((await h.containers(first.metadata.uid!)).length, 1);

    // A user deletes the mirror pod: it comes back, the static pod keeps running.
    h.api.remove(podsResource, name, 'default');
    t.true(await h.until(() => h.pod(name) !== undefined && h.pod(name)!.metadata.uid !== mirror.metadata.uid, 10_000));
    t.is((await h.containers(first.metadata.uid!)).length, 1);

    // Editing the manifest: a new pod replaces the old one, and the mirror follows.
    await writeFile(path.join(dir, 'web.yaml'), manifest('svc.local/busybox:latest').replace('app: web', 'app: web2'));
    const second = staticPodFromManifest(manifest('svc.local/busybox:latest').replace('app: web', 'app: web2'), path.join(dir, 'web.yaml'), NODE);
    t.true(await h.until(async () => (await h.containers(second.metadata.uid!)).length === 1 && (await h.containers(first.metadata.uid!)).length === 0, 60_000));
    t.true(await h.until(() => h.pod(name)?.metadata.annotations?.[CONFIG_MIRROR] === second.metadata.uid && isRunningReady(h.status(name)), 30_000));

    // Removing it: the pod is stopped and cleaned up, the mirror deleted.
    await rm(path.join(dir, 'web.yaml'));
    t.true(await h.until(async () => h.pod(name) === undefined && (await h.sim.listPodSandbox()).length === 0, 60_000));
    t.true(await h.until(() => h.mgr.workerUids.length === 0));
  } finally {
    await h.stop();
  }
});

test('a mirror pod whose manifest is gone (left by an earlier run) is deleted; API pods are not touched', async (t) => {
  const h = await startHarness({ manager: (root) => ({ staticPodPath: path.join(root, 'none'), mirrorPeriodMs: 1000 }) });
  try {
    const stale: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `old-${NODE}`, namespace: 'default', annotations: { [CONFIG_MIRROR]: 'abc', 'svc.io/config.source': 'file' } },
      spec: { nodeName: NODE, containers: [{ name: 'c', image: BUSYBOX }] },
      status: { phase: 'Running' },
    };
    h.api.seed(podsResource, stale);
    h.createPod('regular', { containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => h.pod(`old-${NODE}`) === undefined));
    t.true(await h.until(() => isRunningReady(h.status('regular'))));
    // The stale mirror was never run as a pod.
    t.is((await h.sim.listPodSandbox()).length, 1);
  } finally {
    await h.stop();
  }
});
