/** Compressing a rotated log: complete .gz with the original's mode, nothing left on failure. */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { compressLog } from '../../../../agent/logs/compress-log';

async function tempDir(t: import('ava').ExecutionContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-compress-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('the file is replaced by a .gz of the same mode that decompresses to its bytes', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, '0.log.20250101-000000');
  const bytes = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join(''));
  await writeFile(file, bytes);
  await chmod(file, 0o640);
  t.is(await compressLog(file), `${file}.gz`);
  t.deepEqual(await readdir(dir), ['0.log.20250101-000000.gz']);
  t.deepEqual(gunzipSync(await readFile(`${file}.gz`)), bytes);
  t.is((await stat(`${file}.gz`)).mode & 0o777, 0o640);
});

test('a failure leaves the original and no temporary file', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, '0.log.20250101-000000');
  await mkdir(file);
  await t.throwsAsync(compressLog(file), { code: 'EISDIR' });
  t.deepEqual(await readdir(dir), ['0.log.20250101-000000']);
});
