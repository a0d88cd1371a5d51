/**
 * Storage end to end on the CRI simulator (issue 20 item 5): a real svc-apiserver (PV binder with
 * the local-path provisioner, DefaultStorageClass admission, the volume-aware scheduler) and a real
 * svc-node (sim://) whose localPathDir is a temp dir, driven with kubectl 1.32. A claim of a
 * WaitForFirstConsumer local-path class stays Pending until a pod using it is scheduled, then gets
 * a volume pinned to the node whose directory the agent makes; deleting the claim deletes the
 * volume and the directory. Claims that cannot bind say why in their events.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk } from '../../helpers/real-clients';
import { eventually, kubectlJson, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-storage';
const IMAGE = 'svc.local/busybox:latest';

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;
let localPathDir = '';

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-storage-e2e-'));
  localPathDir = path.join(dir, 'local-path');
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['enableServer: false', `localPathDir: ${localPathDir}`] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
  await eventually('default service account', async () => (await kubectlJson(api!.kubeconfig, ['get', 'serviceaccount', 'default'])).metadata ?? undefined, 60_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function kubectl(args: string[], timeoutMs = 60_000): Promise<string> {
  return kubectlOk(api!.kubeconfig, args, { timeoutMs });
}

type Obj = { metadata: { name: string; uid: string; annotations?: Record<string, string>; labels?: Record<string, string>; finalizers?: string[] }; spec: any; status: any };
const get = <T = Obj>(...args: string[]) => kubectlJson<T>(api!.kubeconfig, ['get', ...args]);
const getOrUndefined = async (...args: string[]): Promise<Obj | undefined> => {
  try {
    return await get(...args);
  } catch (e) {
    if (/NotFound|not found/.test((e as Error).message)) return undefined;
    throw e;
  }
};
/** The reasons and messages of the events about a claim. */
const claimEvents = async (name: string) =>
  (await get<{ items: Array<{ reason: string; message: string }> }>('events', '--field-selector', `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${name}`)).items;

const claim = (name: string, storageClassName?: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName === undefined ? {} : { storageClassName }) } });

test.serial('the default class local-path exists at start, and a claim naming no class gets it', async (t) => {
  const sc = await eventually('local-path class', () => getOrUndefined('storageclass', 'local-path'), 30_000);
  t.like(sc, { provisioner: 'svc.io/local-path', reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer' });
  t.is(sc.metadata.annotations?.['storageclass.svc.io/is-default-class'], 'true');
  t.regex(await kubectl(['get', 'storageclass']), /local-path \(default\)\s+svc\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/);
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], claim('defaulted'));
  t.is((await get('pvc', 'defaulted')).spec.storageClassName, 'local-path');
  await kubectl(['delete', 'pvc', 'defaulted']);
});

test.serial('a claim no volume can satisfy says why in its events', async (t) => {
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], claim('nowhere', ''));
  const e = await eventually('FailedBinding event', async () => (await claimEvents('nowhere')).find((x) => x.reason === 'FailedBinding'), 30_000);
  t.is(e.message, 'no persistent volumes available for this claim and no storage class is set');
  t.is((await get('pvc', 'nowhere')).status.phase, 'Pending');
  await kubectl(['delete', 'pvc', 'nowhere']);
});

test.serial('WaitForFirstConsumer: Pending until the pod is scheduled, then a volume on that node whose directory the agent makes; deleting the claim removes both', async (t) => {
  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'e2e-local' }, provisioner: 'svc.io/local-path', volumeBindingMode: 'WaitForFirstConsumer', parameters: { nodePath: localPathDir } }),
  );
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], claim('data', 'e2e-local'));
  const waiting = await eventually('WaitForFirstConsumer event', async () => (await claimEvents('data')).find((x) => x.reason === 'WaitForFirstConsumer'), 30_000);
  t.is(waiting.message, 'waiting for first consumer to be created before binding');
  t.is((await get('pvc', 'data')).status.phase, 'Pending');

  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'writer' },
      spec: { containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], volumeMounts: [{ name: 'd', mountPath: '/data' }] }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] },
    }),
  );
  const bound = await eventually('claim bound', async () => ((c) => (c.status.phase === 'Bound' ? c : undefined))(await get('pvc', 'data')), 60_000);
  t.is(bound.metadata.annotations?.['volume.svc.io/selected-node'], NODE);
  const pvName = bound.spec.volumeName as string;
  t.is(pvName, `pvc-${bound.metadata.uid}`);
  const pv = await get('pv', pvName);
  t.is(pv.status.phase, 'Bound');
  t.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms, [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE] }] }]);
  const volumeDir = path.join(localPathDir, `${pvName}_default_data`);
  t.is(pv.spec.hostPath.path, volumeDir);
  await eventually('pod running', async () => ((p) => (p.status.phase === 'Running' ? p : undefined))(await get('pod', 'writer')), 60_000);
  t.is(statSync(volumeDir).mode & 0o777, 0o777);
  t.regex(await kubectl(['get', 'pvc', 'data']), new RegExp(`data\\s+Bound\\s+${pvName}\\s+1Gi\\s+RWO\\s+e2e-local`));

  await kubectl(['delete', 'pod', 'writer', '--grace-period=0', '--force'], 90_000);
  await kubectl(['delete', 'pvc', 'data'], 90_000);
  await eventually('volume gone', async () => ((await getOrUndefined('pv', pvName)) ? undefined : true), 60_000);
  t.false(existsSync(volumeDir));
});

test.serial('a StatefulSet\'s claim templates bind on the simulator', async (t) => {
  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'web' },
      spec: {
        serviceName: 'web',
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], volumeMounts: [{ name: 'www', mountPath: '/www' }] }] } },
        volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'e2e-local', resources: { requests: { storage: '1Gi' } } } }],
      },
    }),
  );
  const c = await eventually('www-web-0 bound', async () => ((x) => (x?.status.phase === 'Bound' ? x : undefined))(await getOrUndefined('pvc', 'www-web-0')), 90_000);
  await eventually('web-0 running', async () => ((p) => (p?.status.phase === 'Running' ? p : undefined))(await getOrUndefined('pod', 'web-0')), 60_000);
  t.true(existsSync(path.join(localPathDir, `${c.spec.volumeName}_default_www-web-0`)));
});

test.serial('a volume directory svc-node will not make: the pod and the claim say why, and nothing is made', async (t) => {
  const elsewhere = path.join(dir!, 'not-the-local-path-dir');
  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'e2e-elsewhere' }, provisioner: 'svc.io/local-path', volumeBindingMode: 'WaitForFirstConsumer', parameters: { nodePath: elsewhere } }),
  );
  await kubectlStdin(api!.kubeconfig, ['apply', '-f', '-'], claim('stray', 'e2e-elsewhere'));
  await kubectlStdin(
    api!.kubeconfig,
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stray' },
      spec: { containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], volumeMounts: [{ name: 'd', mountPath: '/data' }] }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'stray' } }] },
    }),
  );
  const e = await eventually('ProvisioningFailed on the claim', async () => (await claimEvents('stray')).find((x) => x.reason === 'ProvisioningFailed'), 60_000);
  t.regex(e.message, /MountVolume\.SetUp failed for volume "d" : local-path volume directory .* is not directly under this node's localPathDir/);
  const podEvents = (await get<{ items: Array<{ reason: string; message: string }> }>('events', '--field-selector', 'involvedObject.kind=Pod,involvedObject.name=stray')).items;
  t.true(podEvents.some((x) => x.reason === 'FailedMount' && x.message === e.message));
  t.is((await get('pod', 'stray')).status.phase, 'Pending');
  t.false(existsSync(elsewhere));
  const pvName = (await get('pvc', 'stray')).spec.volumeName as string;
  await kubectl(['delete', 'pod', 'stray', '--grace-period=0', '--force'], 90_000);
  await kubectl(['delete', 'pvc', 'stray'], 90_000);
  // Nothing was made, so nothing holds the volume: it goes.
  await eventually('stray volume gone', async () => ((await getOrUndefined('pv', pvName)) ? undefined : true), 60_000);
  t.false(existsSync(elsewhere));
});
