import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ArchiveInvalidError, verifyTarArchive } from '../../../../agent/checkpoint/verify-archive';
import { tarOf } from './tar-fixture';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-verify-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

test('a complete tar passes and its entries are counted', async (t) => {
  const f = path.join(dir, 'ok.tar');
  writeFileSync(f, await tarOf({ 'config.dump': '{}', 'spec.dump': 'x'.repeat(3000) }));
  t.is(await verifyTarArchive(f), 2);
});

test('empty, truncated and garbage files are refused', async (t) => {
  const full = await tarOf({ 'config.dump': '{}', 'pages.img': 'p'.repeat(5000) });
  const cases: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    truncated: full.subarray(0, 1024 + 600),
    garbage: Buffer.from('this is not a tar archive at all'.repeat(40)),
  };
  for (const [name, data] of Object.entries(cases)) {
    const f = path.join(dir, `${name}.tar`);
    writeFileSync(f, data);
    await t.throwsAsync(verifyTarArchive(f), { instanceOf: ArchiveInvalidError }, name);
  }
});

test('a missing file rejects with the fs error', async (t) => {
  const e = await t.throwsAsync(verifyTarArchive(path.join(dir, 'absent.tar')));
  t.is((e as NodeJS.ErrnoException).code, 'ENOENT');
});

test('pax long-name headers are not counted as entries; a body cut short by one byte is refused; a bad checksum is refused', async (t) => {
  const long = `checkpoint/${'d'.repeat(120)}/pages-1.img`;
  const full = await tarOf({ [long]: 'x'.repeat(700), 'config.dump': '{}' });
  const f = path.join(dir, 'pax.tar');
  writeFileSync(f, full);
  t.is(await verifyTarArchive(f), 2);
  // Without the end-of-archive blocks the last entry must still be whole.
  const oneEntry = await tarOf({ 'a.bin': 'a'.repeat(1000) });
  const cut = path.join(dir, 'cut.tar');
  writeFileSync(cut, oneEntry.subarray(0, 512 + 999));
  await t.throwsAsync(verifyTarArchive(cut), { instanceOf: ArchiveInvalidError });
  const flipped = Buffer.from(oneEntry);
  flipped[10] = flipped[10] ^ 0x01; // inside the name: the checksum no longer matches
  const bad = path.join(dir, 'checksum.tar');
  writeFileSync(bad, flipped);
  await t.throwsAsync(verifyTarArchive(bad), { instanceOf: ArchiveInvalidError, message: /checksum/ });
});
