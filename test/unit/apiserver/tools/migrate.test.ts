import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import type { Storage } from '../../../../apiserver/storage/storage';
import { runTool, type ToolName } from '../../../../apiserver/tools/cli';
import { DumpFormatError, parseLine } from '../../../../apiserver/tools/dump-format';
import { exportStore } from '../../../../apiserver/tools/export-store';
import { dumpSnapshot, importDump, readDump } from '../../../../apiserver/tools/import-store';
import { compareSnapshots, formatReport, snapshotStore } from '../../../../apiserver/tools/verify';

const NOW = () => new Date('2026-01-02T03:04:05Z');

async function dumpOf(s: Storage, source = 'test'): Promise<string> {
  let text = '';
  await exportStore(
    s,
    source,
    (c) => {
      text += c;
      return Promise.resolve();
    },
    NOW,
  );
  return text;
}

// eslint-disable-next-line @typescript-eslint/require-await -- readDump takes an async iterable; these lines are all there already
async function* lines(text: string): AsyncGenerator<string> {
  yield* text.split('\n');
}

/** A store with a few objects, an updated one, a deleted one and a value that is not UTF-8. */
async function filled(): Promise<Storage> {
  const s = SqliteStorage.open(':memory:');
  const a = await s.create('/core/configmaps/default/a', Buffer.from('{"metadata":{"name":"a","uid":"u-a"}}'));
  await s.update('/core/configmaps/default/a', Buffer.from('{"metadata":{"name":"a","uid":"u-a"},"data":{"x":"1"}}'), a.modRevision);
  await s.create('/core/namespaces/default', Buffer.from('{"metadata":{"name":"default","uid":"u-ns"}}'));
  await s.create('/coordination.svc.io/leases/svc-system/l', Buffer.from('{"metadata":{"name":"l"}}'));
  await s.create('/core/secrets/default/gone', Buffer.from('{}'));
  await s.delete('/core/secrets/default/gone');
  await s.create('/core/secrets/default/bin', Buffer.from([0xff, 0x00, 0xfe, 0x0a]));
  return s;
}

test('export → import copies every key byte for byte and the verification passes', async (t) => {
  const src = await filled();
  const dst = SqliteStorage.open(':memory:');
  t.teardown(() => Promise.all([src.close(), dst.close()]).then(() => undefined));
  const text = await dumpOf(src, 'sqlite src');
  const first = JSON.parse(text.split('\n')[0]);
  t.like(first, { kind: 'SvcStoreDump', version: 1, revision: await src.currentRevision(), source: 'sqlite src', createdAt: '2026-01-02T03:04:05.000Z' });
  const dump = await readDump(lines(text));
  t.deepEqual(dump.records.map((r) => r.key), ['/coordination.svc.io/leases/svc-system/l', '/core/configmaps/default/a', '/core/namespaces/default', '/core/secrets/default/bin']);
  const r = await importDump(dst, dump, 3);
  t.deepEqual(r, { created: 4, unchanged: 0, conflicts: [] });
  t.deepEqual((await dst.get('/core/secrets/default/bin'))?.value, Buffer.from([0xff, 0x00, 0xfe, 0x0a]));
  t.is((await dst.get('/core/configmaps/default/a'))?.value.toString(), '{"metadata":{"name":"a","uid":"u-a"},"data":{"x":"1"}}');
  t.is(await dst.get('/core/secrets/default/gone'), null);
  const report = compareSnapshots(await snapshotStore(src, 'src'), await snapshotStore(dst, 'dst'));
  t.true(report.ok);
  t.deepEqual(report.types, [
    { type: 'configmaps', source: 1, target: 1 },
    { type: 'leases.coordination.svc.io', source: 1, target: 1 },
    { type: 'namespaces', source: 1, target: 1 },
    { type: 'secrets', source: 1, target: 1 },
  ]);
  t.regex(formatReport(report), /verification PASSED: 4 keys, every value identical \(sha256\)/);
  t.true(compareSnapshots(dumpSnapshot(dump, 'dump'), await snapshotStore(dst, 'dst')).ok);
});

test('an empty store exports a header and a trailer, and imports as nothing', async (t) => {
  const src = SqliteStorage.open(':memory:');
  const dst = SqliteStorage.open(':memory:');
  t.teardown(() => Promise.all([src.close(), dst.close()]).then(() => undefined));
  const text = await dumpOf(src);
  t.is(text.trimEnd().split('\n').length, 2);
  const dump = await readDump(lines(text));
  t.is(dump.records.length, 0);
  t.deepEqual(await importDump(dst, dump), { created: 0, unchanged: 0, conflicts: [] });
  t.true(compareSnapshots(dumpSnapshot(dump, 'dump'), await snapshotStore(dst, 'dst')).ok);
});

test('an export pages through many keys at one revision', async (t) => {
  const src = SqliteStorage.open(':memory:');
  t.teardown(() => src.close());
  for (let i = 0; i < 1203; i++) await src.create(`/core/configmaps/ns/k${String(i).padStart(5, '0')}`, Buffer.from(String(i)));
  const dump = await readDump(lines(await dumpOf(src)));
  t.is(dump.records.length, 1203);
  t.is(dump.header.revision, 1203);
  t.is(dump.records[1202].value.toString(), '1202');
});

test('a truncated, altered, reordered or foreign dump is refused before anything is written', async (t) => {
  const src = await filled();
  t.teardown(() => src.close());
  const text = await dumpOf(src);
  const ls = text.trimEnd().split('\n');
  const refuse = async (input: string, why: RegExp) => {
    const e = await t.throwsAsync(readDump(lines(input)));
    t.true(e instanceof DumpFormatError, String(e));
    t.regex(e.message, why);
  };
  await refuse(ls.slice(0, -1).join('\n'), /no trailer after 4 keys: the dump is truncated/);
  await refuse(ls.slice(0, -2).concat(ls.slice(-1)).join('\n'), /trailer says 4 keys, the file holds 3/);
  const rec = JSON.parse(ls[1]);
  rec.value = Buffer.from('tampered').toString('base64');
  await refuse([ls[0], JSON.stringify(rec), ...ls.slice(2)].join('\n'), /do not match the trailer digest/);
  await refuse([ls[0], ls[2], ls[1], ...ls.slice(3)].join('\n'), /do not match the trailer digest/);
  await refuse(ls.slice(1).join('\n'), /does not start with a SvcStoreDump header/);
  await refuse([ls[0], ls[1], ls[1], ...ls.slice(2)].join('\n'), /appears twice/);
  await refuse('', /empty input/);
  await refuse('{"kind":"SvcStoreDump","version":2,"revision":1,"source":"x"}', /version 2 is not supported/);
  await refuse('hello', /line 1: not JSON/);
});

test('import never overwrites: identical keys count as done, different ones are reported and fail the verification', async (t) => {
  const src = await filled();
  const dst = SqliteStorage.open(':memory:');
  t.teardown(() => Promise.all([src.close(), dst.close()]).then(() => undefined));
  const dump = await readDump(lines(await dumpOf(src)));
  // As if an earlier import was interrupted after one key, and the target got another object of its own.
  await dst.create('/core/namespaces/default', Buffer.from('{"metadata":{"name":"default","uid":"u-ns"}}'));
  await dst.create('/core/configmaps/default/a', Buffer.from('{"metadata":{"name":"a","uid":"other"}}'));
  await dst.create('/core/configmaps/default/extra', Buffer.from('{}'));
  const r = await importDump(dst, dump);
  t.deepEqual(r, { created: 2, unchanged: 1, conflicts: ['/core/configmaps/default/a'] });
  t.is((await dst.get('/core/configmaps/default/a'))?.value.toString(), '{"metadata":{"name":"a","uid":"other"}}');
  const report = compareSnapshots(dumpSnapshot(dump, 'dump'), await snapshotStore(dst, 'dst'));
  t.false(report.ok);
  t.deepEqual(report.differing, ['/core/configmaps/default/a']);
  t.deepEqual(report.extra, ['/core/configmaps/default/extra']);
  t.deepEqual(report.missing, []);
  const text = formatReport(report);
  t.regex(text, /configmaps\s+1\s+2 {2}<-- differs/);
  t.regex(text, /keys only in target: 1\n {2}\/core\/configmaps\/default\/extra/);
  t.regex(text, /verification FAILED: 0 missing, 1 extra, 1 differing/);
});

// ---- the sub-commands, on SQLite stores in temp dirs ----

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(name: ToolName, args: string[], stdin = ''): Promise<Ran> {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), now: NOW };
  let stdout = '';
  let stderr = '';
  io.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  io.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  io.stdin.end(stdin);
  const code = await runTool(name, args, io);
  return { code, stdout, stderr };
}

test('svc-apiserver export and import between two data dirs', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const src = SqliteStorage.open(join(root, 'a', 'store', 'state.db'));
  await src.create('/core/configmaps/default/a', Buffer.from('{"metadata":{"uid":"1"}}'));
  await src.create('/core/configmaps/default/b', Buffer.from('{"metadata":{"uid":"2"}}'));
  // While a server holds the store, export refuses with a hint.
  const busy = await run('export', [`--data-dir=${join(root, 'a')}`]);
  await src.close();
  t.is(busy.code, 1);
  t.regex(busy.stderr, /in use by another process: stop svc-apiserver first/);

  const exp = await run('export', [`--data-dir=${join(root, 'a')}`]);
  t.is(exp.code, 0, exp.stderr);
  t.regex(exp.stderr, /^exported 2 keys from sqlite .*\/a\/store\/state\.db at revision 2 \(sha256 [0-9a-f]{64}\)\n$/);
  const imp = await run('import', [`--data-dir=${join(root, 'b')}`], exp.stdout);
  t.is(imp.code, 0, imp.stderr);
  t.regex(imp.stdout, /^dump: 2 keys from sqlite .* at revision 2 \(written 2026-01-02T03:04:05.000Z\)$/m);
  t.regex(imp.stdout, /: 2 created, 0 already present and identical, 0 present with other contents/);
  t.regex(imp.stdout, /verification PASSED: 2 keys/);
  t.regex(imp.stdout, /every client must re-list/);
  const dst = SqliteStorage.open(join(root, 'b', 'store', 'state.db'));
  t.is((await dst.get('/core/configmaps/default/b'))?.value.toString(), '{"metadata":{"uid":"2"}}');
  t.is(await dst.compactedRevision(), await dst.currentRevision(), 'the target is compacted at its head after the import');
  await dst.close();

  // Again: everything is already there and identical.
  const again = await run('import', [`--data-dir=${join(root, 'b')}`], exp.stdout);
  t.is(again.code, 0);
  t.regex(again.stdout, /0 created, 2 already present and identical/);
});

test('export resolves only once its output has left (main exits at once, and a pipe to a slow reader is asynchronous)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const src = SqliteStorage.open(join(root, 'a', 'store', 'state.db'));
  for (let i = 0; i < 20; i++) await src.create(`/core/configmaps/default/c${i}`, Buffer.from(JSON.stringify({ metadata: { uid: String(i) }, data: { v: 'x'.repeat(4096) } })));
  await src.close();
  // A sink that takes each chunk a macrotask later, as a pipe whose reader lags behind.
  let received = '';
  const slow = new Writable({
    write(chunk: Buffer, _enc, done) {
      setImmediate(() => {
        received += chunk.toString();
        done();
      });
    },
  });
  const io = { stdin: new PassThrough(), stdout: slow, stderr: new PassThrough(), now: NOW };
  io.stdin.end('');
  const code = await runTool('export', [`--data-dir=${join(root, 'a')}`], io);
  t.is(code, 0);
  t.is(slow.writableLength, 0, 'nothing is left buffered when runTool resolves');
  const lines = received.trimEnd().split('\n');
  t.is(lines.length, 22, 'header, 20 keys, trailer');
  t.is(parseLine(lines.at(-1)!, lines.length).type, 'trailer', 'the dump ends with its trailer');
});

test('the sub-commands refuse bad input with a clear message and a non-zero status', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-migrate-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const missing = await run('export', [`--data-dir=${join(root, 'nope')}`]);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /no SQLite store at .*nope\/store\/state\.db \(check --data-dir\)/);
  t.is(missing.stdout, '');
  const truncated = await run('import', [`--data-dir=${join(root, 'b')}`], '{"kind":"SvcStoreDump","version":1,"revision":5,"source":"x","createdAt":"t"}\n');
  t.is(truncated.code, 1);
  t.regex(truncated.stderr, /invalid dump: no trailer after 0 keys: the dump is truncated; nothing was imported/);
  const flag = await run('import', ['--bogus']);
  t.is(flag.code, 2);
  t.regex(flag.stderr, /unknown flag: --bogus/);
  const verify = await run('verify', [`--data-dir=${root}`]);
  t.is(verify.code, 1);
  t.regex(verify.stderr, /--etcd-servers is required/);
  const help = await run('import', ['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /^Usage: svc-apiserver import/);
});
