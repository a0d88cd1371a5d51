import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { canonicalJson, CHECKPOINT_FILE, CheckpointCorruptError, checksumOf, decodeCheckpoint, encodeCheckpoint, readCheckpoint, writeCheckpoint, type CheckpointData } from '../../../../agent/devices/checkpoint';

const data: CheckpointData = {
  PodDeviceEntries: [
    {
      PodUID: 'u1',
      ContainerName: 'app',
      ResourceName: 'example.com/foo',
      DeviceIDs: { '-1': ['d0', 'd1'] },
      AllocResp: { envs: { A: '1' }, mounts: [{ containerPath: '/x', hostPath: '/y', readOnly: true }], devices: [], annotations: {}, cdiDevices: ['example.com/foo=d0'] },
    },
  ],
  RegisteredDevices: { 'example.com/foo': ['d0', 'd1', 'd2'] },
};

test('canonical JSON does not depend on key order', (t) => {
  t.is(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: 'x' } }), '{"a":{"c":"x","d":[2,{"y":2,"z":1}]},"b":1}');
  // Integer-like keys first, numerically (ECMAScript property order), then the others sorted.
  t.is(canonicalJson({ '-1': 'a', '10': 'b', '2': 'c', B: 1, A: 2 }), '{"2":"c","10":"b","-1":"a","A":2,"B":1}');
  // The file's Data is exactly the canonical text the checksum covers.
  const doc = encodeCheckpoint(data);
  t.is(doc, `{"Data":${canonicalJson(data)},"Checksum":"${checksumOf(data)}"}`);
  const shuffled = JSON.parse(JSON.stringify({ RegisteredDevices: data.RegisteredDevices, PodDeviceEntries: data.PodDeviceEntries })) as CheckpointData;
  t.is(checksumOf(shuffled), checksumOf(data));
  t.regex(checksumOf(data), /^sha256:[0-9a-f]{64}$/);
});

test('round trip through the file; written 0600 with no temp file left', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-devckpt-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.is(await readCheckpoint(dir), undefined);
  await writeCheckpoint(dir, data);
  t.deepEqual(await readCheckpoint(dir), data);
  t.is(statSync(path.join(dir, CHECKPOINT_FILE)).mode & 0o777, 0o600);
  t.deepEqual(readdirSync(dir), [CHECKPOINT_FILE]);
  const doc = JSON.parse(readFileSync(path.join(dir, CHECKPOINT_FILE), 'utf8')) as Record<string, unknown>;
  t.deepEqual(Object.keys(doc), ['Data', 'Checksum']);
});

test('truncation, junk, edited data and wrong shapes are CheckpointCorruptError', (t) => {
  const good = encodeCheckpoint(data);
  t.deepEqual(decodeCheckpoint(good), data);
  for (let cut = 1; cut < good.length; cut += 37) t.throws(() => decodeCheckpoint(good.slice(0, cut)), { instanceOf: CheckpointCorruptError });
  const edited = good.replace('"d2"', '"d9"');
  t.throws(() => decodeCheckpoint(edited), { instanceOf: CheckpointCorruptError, message: /checksum mismatch/ });
  t.throws(() => decodeCheckpoint('[]'), { instanceOf: CheckpointCorruptError });
  // Upstream's numeric checksum is not ours.
  t.throws(() => decodeCheckpoint(JSON.stringify({ Data: data, Checksum: 1234567 })), { instanceOf: CheckpointCorruptError });
  const bad = { ...data, PodDeviceEntries: [{ ...data.PodDeviceEntries[0], DeviceIDs: { '0': 'd0' } }] } as unknown as CheckpointData;
  t.throws(() => decodeCheckpoint(JSON.stringify({ Data: bad, Checksum: checksumOf(bad) })), { instanceOf: CheckpointCorruptError, message: /DeviceIDs/ });
});
