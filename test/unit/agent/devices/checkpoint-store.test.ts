/** The checkpoint file on its own: missing, corrupt, and writes of the snapshot as of the write. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CHECKPOINT_FILE, readCheckpoint, type CheckpointData } from '../../../../agent/devices/checkpoint';
import { CheckpointStore } from '../../../../agent/devices/checkpoint-store';
import { MemLog } from '../node/fakes/mem-log';

function setup(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-ckpt-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = new MemLog();
  let state: CheckpointData = { PodDeviceEntries: [], RegisteredDevices: {} };
  let snapshots = 0;
  const store = new CheckpointStore({
    dir,
    log,
    snapshot: () => {
      snapshots++;
      return state;
    },
  });
  return { dir, log, store, set: (s: CheckpointData) => (state = s), snapshots: () => snapshots };
}

test('no file: nothing loaded, not lost; a write stores the snapshot, which load then returns', async (t) => {
  const s = setup(t);
  t.deepEqual(await s.store.load(), { data: undefined, lost: false });
  s.set({ PodDeviceEntries: [], RegisteredDevices: { 'example.com/foo': ['a', 'b'] } });
  await s.store.persist();
  t.deepEqual((await readCheckpoint(s.dir))!.RegisteredDevices, { 'example.com/foo': ['a', 'b'] });
  t.deepEqual((await s.store.load()).data!.RegisteredDevices, { 'example.com/foo': ['a', 'b'] });
});

test('a corrupt file is logged and reported lost', async (t) => {
  const s = setup(t);
  writeFileSync(path.join(s.dir, CHECKPOINT_FILE), '{"Data": "truncat');
  t.deepEqual(await s.store.load(), { data: undefined, lost: true });
  t.is(s.log.find('device checkpoint is corrupt').length, 1);
});

test('writes requested while one runs share one follow-up write; idle waits for them; a failing write is logged, never thrown', async (t) => {
  const s = setup(t);
  await Promise.all([s.store.persist(), s.store.persist(), s.store.persist()]);
  t.is(s.snapshots(), 2, 'the first write, then one for both requests made meanwhile');
  void s.store.persist();
  await s.store.idle();
  t.is(s.snapshots(), 3);
  rmSync(s.dir, { recursive: true, force: true });
  await s.store.persist();
  t.is(s.log.find('cannot write the device checkpoint').length, 1);
});
