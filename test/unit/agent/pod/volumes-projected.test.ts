/**
 * VolumeManager with projected, downwardAPI and persistentVolumeClaim volumes, against fake API
 * objects and a fake token requester, on a temp dir.
 */
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { ConfigObjectGetter } from '../../../../agent/pod/config-objects';
import type { ConfigMap, Pod, Secret } from '../../../../agent/api/core-v1';
import { TokenManager, type IssuedToken, type TokenRequester, type TokenSpec } from '../../../../agent/pod/token-manager';
import type { ClaimGetter } from '../../../../agent/pod/volume-pvc';
import { VolumeError, VolumeManager } from '../../../../agent/pod/volumes';

const T0 = Date.parse('2026-01-01T00:00:00Z');

class Objects implements ConfigObjectGetter {
  cms = new Map<string, ConfigMap>();
  secrets = new Map<string, Secret>();
  configMap(ns: string, name: string) {
    return Promise.resolve(this.cms.get(`${ns}/${name}`));
  }
  secret(ns: string, name: string) {
    return Promise.resolve(this.secrets.get(`${ns}/${name}`));
  }
}

class Requester implements TokenRequester {
  calls: { ns: string; sa: string; spec: TokenSpec }[] = [];
  constructor(private readonly clock: { ms: number }) {}
  request(ns: string, sa: string, spec: TokenSpec): Promise<IssuedToken> {
    this.calls.push({ ns, sa, spec });
    return Promise.resolve({ token: `token-${this.calls.length}`, expiresAt: this.clock.ms + spec.expirationSeconds * 1000, expirationSeconds: spec.expirationSeconds });
  }
}

class Claims implements ClaimGetter {
  claims = new Map<string, KObject>();
  pvs = new Map<string, KObject>();
  claim(ns: string, name: string) {
    return Promise.resolve(this.claims.get(`${ns}/${name}`));
  }
  volume(name: string) {
    return Promise.resolve(this.pvs.get(name));
  }
}

function setup(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-vol-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = { ms: T0 };
  const objects = new Objects();
  const requester = new Requester(clock);
  const claims = new Claims();
  const tokens = new TokenManager({ requester, now: () => clock.ms, random: () => 0 });
  const vm = new VolumeManager({ podsDir: path.join(dir, 'pods'), objects, now: () => clock.ms, tokens, claims, nodeAllocatable: () => ({ cpuMilli: 4000, memory: 8 * 2 ** 30 }) });
  return { dir, clock, objects, requester, claims, tokens, vm };
}

const basePod = (volumes: Record<string, unknown>[], extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-1', labels: { b: '2', a: 'x"y' }, annotations: { note: 'hi' } },
  spec: { serviceAccountName: 'builder', containers: [{ name: 'app', resources: { limits: { cpu: '250m' }, requests: { memory: '64Mi' } } }], volumes: volumes as Pod['spec']['volumes'], ...extra },
});

const mode = (p: string) => statSync(p).mode & 0o777;

test('projected: token, configMap item, secret and downward API in one atomic directory, with modes', async (t) => {
  const { objects, requester, vm, clock, tokens } = setup(t);
  objects.cms.set('ns/kube-root-ca.crt', { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': 'CA PEM', other: 'x' } });
  objects.secrets.set('ns/creds', { metadata: { name: 'creds' }, data: { user: Buffer.from('bob').toString('base64') } });
  const pod = basePod([
    {
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 0o640,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token', audience: 'api' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { secret: { name: 'creds', items: [{ key: 'user', path: 'sub/user', mode: 0o600 }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          { configMap: { name: 'absent', optional: true } },
        ],
      },
    },
  ]);
  const out = await vm.setUp(pod);
  const dir = out.get('kube-api-access-abcde')!;
  t.is(dir, path.join(vm.podDir('uid-1'), 'volumes', 'svc.io~projected', 'kube-api-access-abcde'));
  t.is(readFileSync(path.join(dir, 'token'), 'utf8'), 'token-1');
  t.is(readFileSync(path.join(dir, 'ca.crt'), 'utf8'), 'CA PEM');
  t.is(readFileSync(path.join(dir, 'namespace'), 'utf8'), 'ns');
  t.is(readFileSync(path.join(dir, 'sub', 'user'), 'utf8'), 'bob');
  t.is(mode(path.join(dir, 'token')), 0o640, "the volume's defaultMode");
  t.is(mode(path.join(dir, 'sub', 'user')), 0o600, "the item's mode");
  t.true(lstatSync(path.join(dir, 'token')).isSymbolicLink(), 'visible names go through ..data');
  t.is(mode(vm.podDir('uid-1')), 0o750, 'other host users cannot reach the files');
  t.deepEqual(requester.calls, [{ ns: 'ns', sa: 'builder', spec: { audiences: ['api'], expirationSeconds: 3607, pod: { name: 'web', uid: 'uid-1' } } }]);

  // A resync before the refresh point reuses the token; after it, the file is replaced atomically.
  clock.ms = T0 + 60_000;
  await vm.setUp(pod);
  t.is(requester.calls.length, 1);
  const before = readlinkSync(path.join(dir, '..data'));
  clock.ms = T0 + 2900_000;
  await vm.setUp(pod);
  t.is(requester.calls.length, 2);
  t.is(readFileSync(path.join(dir, 'token'), 'utf8'), 'token-2');
  t.not(readlinkSync(path.join(dir, '..data')), before);

  // Teardown removes the files and forgets the pod's tokens.
  await vm.tearDown('uid-1');
  t.is(tokens.size, 0);
});

test('projected: a missing configMap or key fails the volume with a message; unsupported sources are named', async (t) => {
  const { vm, objects } = setup(t);
  const proj = (sources: unknown[]) => basePod([{ name: 'v', projected: { sources } }]);
  let err = await t.throwsAsync(vm.setUp(proj([{ configMap: { name: 'kube-root-ca.crt' } }])), { instanceOf: VolumeError });
  t.is(err.message, 'MountVolume.SetUp failed for volume "v" : configmap "kube-root-ca.crt" not found');
  objects.cms.set('ns/c', { metadata: { name: 'c' }, data: { a: '1' } });
  err = await t.throwsAsync(vm.setUp(proj([{ configMap: { name: 'c', items: [{ key: 'b', path: 'b' }] } }])), { instanceOf: VolumeError });
  t.regex(err.message, /key b of configmap ns\/c/);
  err = await t.throwsAsync(vm.setUp(proj([{ clusterTrustBundle: { name: 'x', path: 'b' } }])), { instanceOf: VolumeError });
  t.regex(err.message, /projected source "clusterTrustBundle" is not supported/);
});

test('projected: a token request the server refuses is a volume error with its message', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-vol-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tokens = new TokenManager({ requester: { request: async () => Promise.reject(new Error('serviceaccounts "builder" is forbidden')) }, now: Date.now });
  const vm = new VolumeManager({ podsDir: dir, objects: new Objects(), tokens });
  const err = await t.throwsAsync(vm.setUp(basePod([{ name: 'v', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }])), { instanceOf: VolumeError });
  t.is(err.message, 'MountVolume.SetUp failed for volume "v" : failed to fetch token: serviceaccounts "builder" is forbidden');
});

test('downwardAPI volume: metadata fields and container resources, refreshed when labels change', async (t) => {
  const { vm } = setup(t);
  const items = [
    { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
    { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
    { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
    { path: 'one', fieldRef: { fieldPath: "metadata.labels['b']" } },
    { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' }, mode: 0o600 },
    { path: 'cpu_limit_m', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' } },
    { path: 'cpu_limit', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu' } },
    { path: 'mem_limit', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } },
    { path: 'mem_request', resourceFieldRef: { containerName: 'app', resource: 'requests.memory' } },
  ];
  const pod = basePod([{ name: 'info', downwardAPI: { items, defaultMode: 0o644 } }]);
  const dir = (await vm.setUp(pod)).get('info')!;
  t.is(dir, path.join(vm.podDir('uid-1'), 'volumes', 'svc.io~downward-api', 'info'));
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  t.is(read('name'), 'web');
  t.is(read('uid'), 'uid-1');
  t.is(read('labels'), 'a="x\\"y"\nb="2"');
  t.is(read('one'), '2');
  t.is(read('annotations'), 'note="hi"');
  t.is(mode(path.join(dir, 'annotations')), 0o600);
  t.is(mode(path.join(dir, 'name')), 0o644);
  t.is(read('cpu_limit_m'), '250');
  t.is(read('cpu_limit'), '1', 'rounded up to whole cores');
  t.is(read('mem_limit'), String(8 * 1024), 'no memory limit: the node allocatable');
  t.is(read('mem_request'), String(64 * 2 ** 20));

  pod.metadata.labels = { c: '3' };
  await vm.setUp(pod);
  t.is(read('labels'), 'c="3"');

  const bad = basePod([{ name: 'info', downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'spec.nodeName' } }] } }]);
  const err = await t.throwsAsync(vm.setUp(bad), { instanceOf: VolumeError });
  t.regex(err.message, /unsupported fieldPath: spec.nodeName/);
  const noContainer = basePod([{ name: 'info', downwardAPI: { items: [{ path: 'x', resourceFieldRef: { containerName: 'nope', resource: 'limits.cpu' } }] } }]);
  await t.throwsAsync(vm.setUp(noContainer), { message: /container "nope" not found/ });
});

test('persistentVolumeClaim: bound claims resolve to the PV path; unbound ones wait with a message; other PV types are refused', async (t) => {
  const { vm, claims, dir } = setup(t);
  const hostDir = path.join(dir, 'pv-data');
  const localDir = path.join(dir, 'local-data');
  mkdirSync(localDir);
  const claim = (name: string, volumeName: string | undefined, phase: string): KObject => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec: volumeName ? { volumeName } : {}, status: { phase } });
  const pv = (name: string, claimName: string, spec: Record<string, unknown>): KObject => ({ metadata: { name }, spec: { claimRef: { namespace: 'ns', name: claimName, uid: `uid-${claimName}` }, ...spec } });
  claims.claims.set('ns/data', claim('data', 'pv-host', 'Bound'));
  claims.pvs.set('pv-host', pv('pv-host', 'data', { hostPath: { path: hostDir, type: 'DirectoryOrCreate' } }));
  claims.claims.set('ns/fast', claim('fast', 'pv-local', 'Bound'));
  claims.pvs.set('pv-local', pv('pv-local', 'fast', { local: { path: localDir } }));
  const podWith = (claimName: string) => basePod([{ name: 'v', persistentVolumeClaim: { claimName } }]);

  t.is((await vm.setUp(podWith('data'))).get('v'), hostDir);
  t.true(statSync(hostDir).isDirectory(), 'DirectoryOrCreate made it');
  t.is((await vm.setUp(podWith('fast'))).get('v'), localDir);

  claims.claims.set('ns/pending', claim('pending', undefined, 'Pending'));
  let err = await t.throwsAsync(vm.setUp(podWith('pending')), { instanceOf: VolumeError });
  t.is(err.message, 'MountVolume.SetUp failed for volume "v" : error processing PVC ns/pending: PVC is not bound (pod has unbound immediate PersistentVolumeClaims)');
  err = await t.throwsAsync(vm.setUp(podWith('ghost')), { instanceOf: VolumeError });
  t.regex(err.message, /persistentvolumeclaim "ghost" not found/);

  claims.claims.set('ns/nfs', claim('nfs', 'pv-nfs', 'Bound'));
  claims.pvs.set('pv-nfs', pv('pv-nfs', 'nfs', { nfs: { server: 'x', path: '/' }, capacity: { storage: '1Gi' } }));
  err = await t.throwsAsync(vm.setUp(podWith('nfs')), { instanceOf: VolumeError });
  t.regex(err.message, /persistent volume "pv-nfs" of type "nfs" is not supported by svc-node \(supported: hostPath, local\)/);

  claims.claims.set('ns/stolen', claim('stolen', 'pv-host', 'Bound'));
  err = await t.throwsAsync(vm.setUp(podWith('stolen')), { instanceOf: VolumeError });
  t.regex(err.message, /not bound to this claim/);

  const deleting = claim('data', 'pv-host', 'Bound');
  deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  claims.claims.set('ns/data', deleting);
  err = await t.throwsAsync(vm.setUp(podWith('data')), { instanceOf: VolumeError });
  t.regex(err.message, /PVC ns\/data is being deleted/);

  rmSync(localDir, { recursive: true });
  err = await t.throwsAsync(vm.setUp(podWith('fast')), { instanceOf: VolumeError });
  t.regex(err.message, /local volume "pv-local" path .* does not exist/);
});

test("projected token ownership follows upstream's fsUser and fsGroup rules", async (t) => {
  const { objects, vm } = setup(t);
  objects.cms.set('ns/kube-root-ca.crt', { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': 'CA PEM' } });
  const volume = {
    name: 'tok',
    projected: { defaultMode: 0o644, sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }] },
  };
  const st = (uid: string, f: string) => statSync(path.join(vm.podDir(uid), 'volumes', 'svc.io~projected', 'tok', f));

  // Every container runs as 1234: the token is 0600 and belongs to that user.
  const single = basePod([volume], { securityContext: { runAsUser: 1234 } });
  single.metadata.uid = 'u-single';
  await vm.setUp(single);
  t.is(st('u-single', 'token').mode & 0o777, 0o600);
  t.is(st('u-single', 'token').uid, 1234);
  t.is(st('u-single', 'ca.crt').mode & 0o777, 0o644);

  // Containers disagree: no fsUser, the volume's mode.
  const mixed = basePod([volume], { securityContext: { runAsUser: 1234 }, initContainers: [{ name: 'init', securityContext: { runAsUser: 99 } }] });
  mixed.metadata.uid = 'u-mixed';
  await vm.setUp(mixed);
  t.is(st('u-mixed', 'token').mode & 0o777, 0o644);
  t.is(st('u-mixed', 'token').uid, 0);

  // fsGroup: the token is 0600 plus group read, every file belongs to the group.
  const grouped = basePod([volume], { securityContext: { fsGroup: 2000 } });
  grouped.metadata.uid = 'u-group';
  await vm.setUp(grouped);
  t.is(st('u-group', 'token').mode & 0o777, 0o640);
  t.is(st('u-group', 'token').gid, 2000);
  t.is(st('u-group', 'ca.crt').gid, 2000);
  t.is(st('u-group', 'ca.crt').mode & 0o777, 0o644);
});
