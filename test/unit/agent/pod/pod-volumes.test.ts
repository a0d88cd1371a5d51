/**
 * Projected token and persistentVolumeClaim volumes through the whole pod machinery (PodManager on
 * the simulator, fake API, fake time): the token file is written before the containers start,
 * mounted read-only, and replaced by a periodic resync once 80% of its lifetime has passed; an
 * unbound claim keeps the pod ContainerCreating with the reason until it binds.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { WriteOptions } from '../../../../agent/client/api-client';
import type { ResourceRef } from '../../../../agent/client/resources';
import { claimsResource, volumesResource } from '../../../../agent/pod/volume-pvc';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { isRunningReady, RecordingSimulator, startHarness, waitingReason, type Harness } from './harness';

/** The fake API plus the serviceaccounts/token sub-resource, answering like the API server. */
class TokenApi extends FakeApiClient {
  readonly tokenRequests: { namespace?: string; name?: string; spec: unknown }[] = [];
  /** Fake-clock time of each token request. */
  readonly issuedAt: number[] = [];
  constructor(private readonly clock: FakeClock) {
    super();
  }
  override async create<T extends KObject = KObject>(r: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    if (r.resource !== 'serviceaccounts' || opts.subresource !== 'token') return super.create(r, obj, opts);
    const spec = obj.spec as { expirationSeconds: number };
    this.tokenRequests.push({ namespace: opts.namespace, name: obj.metadata.name, spec: obj.spec });
    this.issuedAt.push(this.clock.now());
    return { ...obj, status: { token: `tok-${this.tokenRequests.length}`, expirationTimestamp: new Date(this.clock.now() + spec.expirationSeconds * 1000).toISOString() } };
  }
}

async function harness(t: { teardown(fn: () => Promise<void>): void }): Promise<{ h: Harness; api: TokenApi }> {
  const clock = new FakeClock();
  const api = new TokenApi(clock);
  const root = await mkdtemp(path.join(tmpdir(), 'svc-pod-test-'));
  const h = await startHarness({ reuse: { sim: new RecordingSimulator({ clock }), api, root, clock } });
  t.teardown(() => h.stop());
  return { h, api };
}

const IMAGE = 'svc.local/busybox:latest';
const MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

test('projected token volume: written before start, mounted read-only, refreshed by the resync at 80% of its lifetime', async (t) => {
  const { h, api } = await harness(t);
  h.configMap('kube-root-ca.crt', { 'ca.crt': 'CA' });
  const pod = h.createPod('web', {
    serviceAccountName: 'builder',
    containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep'], args: ['3600'], volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: MOUNT }] }],
    volumes: [
      {
        name: 'kube-api-access-abcde',
        projected: {
          defaultMode: 0o644,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ],
  });
  t.true(await h.until(() => isRunningReady(h.status('web'))), JSON.stringify(h.status('web')) + JSON.stringify(h.log.lines.slice(-10)));
  const dir = path.join(h.root, 'root', 'pods', pod.metadata.uid!, 'volumes', 'svc.io~projected', 'kube-api-access-abcde');
  const token = () => readFileSync(path.join(dir, 'token'), 'utf8');
  t.is(token(), 'tok-1');
  t.is(readFileSync(path.join(dir, 'namespace'), 'utf8'), 'default');
  t.deepEqual(api.tokenRequests[0], {
    namespace: 'default',
    name: 'builder',
    spec: { audiences: [], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: pod.metadata.uid } },
  });
  const mount = (h.sim.lastConfig('app')!.mounts ?? []).find((m) => m.containerPath === MOUNT);
  t.is(mount?.hostPath, dir);
  t.true(mount?.readonly, 'API data volumes are always mounted read-only (upstream), whatever the mount says');

  // Resyncs (every 60 s) reuse the token until less than 20% of 3607 s is left, then replace it.
  t.true(await h.until(() => api.tokenRequests.length >= 2, 3_000_000, 60_000));
  // Due after 3607 s - 721 s = 2886 s (less up to 10 s of jitter); seen by the next resync.
  const age = api.issuedAt[1] - api.issuedAt[0];
  t.true(age >= 2876_000 && age <= 2886_000 + 120_000, `refreshed after ${age} ms`);
  t.true(await h.until(() => token() === 'tok-2', 120_000, 1000));
  t.is(api.tokenRequests.length, 2);
});

test('an unbound claim keeps the pod ContainerCreating with the reason; once bound, the PV path is mounted', async (t) => {
  const { h } = await harness(t);
  h.api.seed(claimsResource, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' }, spec: {}, status: { phase: 'Pending' } });
  h.createPod('db', { containers: [{ name: 'db', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep'], args: ['3600'], volumeMounts: [{ name: 'store', mountPath: '/var/lib/db' }] }], volumes: [{ name: 'store', persistentVolumeClaim: { claimName: 'data' } }] });
  t.true(await h.until(() => waitingReason(h.status('db'), 'db') === 'ContainerCreating' && /PVC is not bound/.test(h.status('db')?.containerStatuses?.[0]?.state.waiting?.message ?? '')));
  t.is(h.sim.lastConfig('db'), undefined);

  const hostDir = path.join(h.root, 'pv-data');
  const claim = h.api.peek(claimsResource, 'data', 'default')!;
  h.api.seed(volumesResource, { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' }, spec: { hostPath: { path: hostDir, type: 'DirectoryOrCreate' }, claimRef: { namespace: 'default', name: 'data', uid: claim.metadata.uid } } });
  h.api.mutate(claimsResource, 'data', 'default', (o) => {
    o.spec = { volumeName: 'pv-1' };
    o.status = { phase: 'Bound' };
  });
  t.true(await h.until(() => isRunningReady(h.status('db'))));
  const mount = (h.sim.lastConfig('db')!.mounts ?? []).find((m) => m.containerPath === '/var/lib/db');
  t.is(mount?.hostPath, hostDir);
  t.false(mount?.readonly);
});
