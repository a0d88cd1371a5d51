import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { ensureLocalPathDir, isLocalPathVolume, LocalPathError, removeLocalPathDir } from '../../../../agent/pod/local-path';
import { LocalPathCleaner } from '../../../../agent/pod/local-path-cleaner';
import { volumesResource } from '../../../../agent/pod/volume-pvc';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent } as never;

async function base(t: { teardown(fn: () => Promise<void>): void }): Promise<{ root: string; dir: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-local-path-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  return { root, dir: path.join(root, 'local-path') };
}

test('the volume directory is made 0777 under a 0700 base directory, and kept with its data when it exists', async (t) => {
  const { dir } = await base(t);
  const vol = path.join(dir, 'pvc-1_ns_data');
  await ensureLocalPathDir(dir, vol);
  t.is((await stat(dir)).mode & 0o777, 0o700);
  t.is((await stat(vol)).mode & 0o777, 0o777);
  await writeFile(path.join(vol, 'kept'), 'x');
  await ensureLocalPathDir(dir, vol);
  t.deepEqual(await readdir(vol), ['kept']);
  await removeLocalPathDir(dir, vol);
  t.deepEqual(await readdir(dir), []);
  await t.notThrowsAsync(removeLocalPathDir(dir, vol), 'removing what is gone is nothing');
});

test('paths outside the base directory are refused and nothing is made', async (t) => {
  const { root, dir } = await base(t);
  for (const bad of [path.join(root, 'elsewhere'), path.join(dir, 'a', 'b'), path.join(dir, '..', 'x'), path.join(dir, '.hidden'), dir]) {
    const err = await t.throwsAsync(ensureLocalPathDir(dir, bad), { instanceOf: LocalPathError });
    t.regex(err.message, /is not directly under this node's localPathDir/);
    await t.throwsAsync(removeLocalPathDir(dir, bad), { instanceOf: LocalPathError });
  }
  t.deepEqual(await readdir(root), []);
});

test('a directory that cannot be made says why and leaves nothing half-made', async (t) => {
  const { root, dir } = await base(t);
  // The base directory is a file: neither it nor the volume can be made.
  await writeFile(dir, 'not a directory');
  const err = await t.throwsAsync(ensureLocalPathDir(dir, path.join(dir, 'pvc-1_ns_data')), { instanceOf: LocalPathError });
  t.regex(err.message, /^cannot create local-path volume directory .*pvc-1_ns_data: /);
  t.deepEqual(await readdir(root), ['local-path']);
  // A file where the volume's directory goes.
  await rm(dir);
  await mkdir(dir);
  await writeFile(path.join(dir, 'pvc-2_ns_data'), '');
  t.regex((await t.throwsAsync(ensureLocalPathDir(dir, path.join(dir, 'pvc-2_ns_data')))).message, /a file of that name exists/);
});

function volume(root: string, meta: Partial<KObject['metadata']> = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: 'pvc-1',
      labels: { 'local-path.svc.io/node': 'n1' },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'svc.io/local-path' },
      finalizers: ['svc.io/local-path-cleanup', 'kubernetes.io/pv-protection'],
      ...meta,
    },
    spec: { hostPath: { path: path.join(root, 'pvc-1_ns_data'), type: 'DirectoryOrCreate' } },
  };
}

test('isLocalPathVolume needs the provisioner annotation (either spelling) and the node label', (t) => {
  t.true(isLocalPathVolume(volume('/x')));
  t.true(isLocalPathVolume(volume('/x', { annotations: { 'pv.svc.io/provisioned-by': 'svc.io/local-path' } })));
  t.false(isLocalPathVolume(volume('/x', { labels: {} })));
  t.false(isLocalPathVolume(volume('/x', { annotations: { 'pv.kubernetes.io/provisioned-by': 'other' } })));
});

test('the cleaner removes a deleted volume\'s directory, then only its own finalizer; live volumes are left', async (t) => {
  const { dir } = await base(t);
  await ensureLocalPathDir(dir, path.join(dir, 'pvc-1_ns_data'));
  await ensureLocalPathDir(dir, path.join(dir, 'pvc-2_ns_data'));
  const api = new FakeApiClient();
  api.seed(volumesResource, volume(dir, { deletionTimestamp: '2025-01-01T00:00:00Z' }));
  const live = volume(dir, { name: 'pvc-2' });
  (live.spec as any).hostPath.path = path.join(dir, 'pvc-2_ns_data');
  api.seed(volumesResource, live);
  const written = new Promise<KObject>((resolve) => {
    api.onWrite = (c, o) => {
      if (c.verb === 'update') resolve(o);
    };
  });
  const cleaner = new LocalPathCleaner({ client: api, nodeName: 'n1', baseDir: dir, clock: new FakeClock(), log: silent });
  const ac = new AbortController();
  const run = cleaner.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  const after = await written;
  t.is(after.metadata.name, 'pvc-1');
  t.deepEqual(after.metadata.finalizers, ['kubernetes.io/pv-protection']);
  t.deepEqual(await readdir(dir), ['pvc-2_ns_data']);
});

test('the cleaner takes the finalizer off a volume outside localPathDir without touching the disk', async (t) => {
  const { root, dir } = await base(t);
  const outside = path.join(root, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'keep'), 'x');
  const api = new FakeApiClient();
  const pv = volume(dir, { deletionTimestamp: '2025-01-01T00:00:00Z' });
  (pv.spec as any).hostPath.path = outside;
  api.seed(volumesResource, pv);
  const written = new Promise<KObject>((resolve) => {
    api.onWrite = (c, o) => {
      if (c.verb === 'update') resolve(o);
    };
  });
  const ac = new AbortController();
  const run = new LocalPathCleaner({ client: api, nodeName: 'n1', baseDir: dir, clock: new FakeClock(), log: silent }).run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await run;
  });
  t.deepEqual((await written).metadata.finalizers, ['kubernetes.io/pv-protection']);
  t.deepEqual(await readdir(outside), ['keep']);
});
