import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { FlagError, parseFlags, type ApiServerFlags } from '../config/flags';
import { EtcdStorage } from '../storage/etcd';
import { SqliteStorage } from '../storage/sqlite';
import { StorageError, type Storage } from '../storage/storage';
import { DumpFormatError } from './dump-format';
import { exportStore } from './export-store';
import { dumpSnapshot, importDump, readDump } from './import-store';
import { compareSnapshots, formatReport, snapshotStore } from './verify';

/** The store migration sub-commands of svc-apiserver. */
export const TOOLS = ['export', 'import', 'verify'] as const;
export type ToolName = (typeof TOOLS)[number];

export interface ToolIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  now: () => Date;
}

const USAGE: Record<ToolName, string> = {
  export: `Usage: svc-apiserver export [--data-dir=DIR | --etcd-servers=URLS [--etcd-prefix --etcd-cafile --etcd-certfile --etcd-keyfile]] > dump.ndjson

Writes every object of the store, byte for byte, to stdout as a dump (NDJSON with a trailer
holding the key count and a sha256 digest). Without --etcd-servers it reads the SQLite store
under --data-dir, which must not be in use: stop svc-apiserver first.
`,
  import: `Usage: svc-apiserver import --etcd-servers=URLS [--etcd-prefix --etcd-cafile --etcd-certfile --etcd-keyfile] < dump.ndjson
       svc-apiserver import --data-dir=DIR < dump.ndjson

Checks the whole dump (trailer count and digest), creates every key in the target store with
its exact bytes (uids, creationTimestamps, everything but resourceVersion are preserved), compacts
the target's history, then re-reads the target and verifies every key against the dump. Keys the
target already holds are never overwritten: identical ones are counted as done (re-running after
an interrupted import completes it), others are reported and fail the verification.
Exit status 0 only when the verification passes.
`,
  verify: `Usage: svc-apiserver verify --data-dir=DIR --etcd-servers=URLS [--etcd-prefix --etcd-cafile --etcd-certfile --etcd-keyfile]

Reads the SQLite store under --data-dir and the etcd store, each at one revision, and compares
their keys and per-key value hashes (sha256), printing counts per object type and every
difference. Exit status 0 only when both hold exactly the same keys and bytes.
`,
};

/** Runs one sub-command with its flags (svc-apiserver's flag syntax); resolves to the exit status. */
export async function runTool(name: ToolName, argv: readonly string[], io: ToolIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(USAGE[name]);
    return 0;
  }
  let flags: ApiServerFlags;
  try {
    flags = parseFlags(argv);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    io.stderr.write(`svc-apiserver ${name}: ${e.message}\n\n${USAGE[name]}`);
    return 2;
  }
  const opened: Storage[] = [];
  try {
    switch (name) {
      case 'export':
        return await runExport(flags, io, opened);
      case 'import':
        return await runImport(flags, io, opened);
      case 'verify':
        return await runVerify(flags, io, opened);
    }
  } catch (e) {
    io.stderr.write(`svc-apiserver ${name}: ${describe(e)}\n`);
    return 1;
  } finally {
    await Promise.all(opened.map((s) => s.close()));
    // main exits the process as soon as this resolves, and writes to a pipe are asynchronous in
    // Node on Linux: without this, a reader slower than the export lost the dump's tail (seen in
    // CI as "no trailer after 93 keys"). An empty write's callback runs once all before it left.
    await Promise.all([flushed(io.stdout), flushed(io.stderr)]);
  }
}

function flushed(w: Writable): Promise<void> {
  return new Promise((resolve, reject) => w.write('', (err) => (err ? reject(err) : resolve())));
}

async function runExport(flags: ApiServerFlags, io: ToolIo, opened: Storage[]): Promise<number> {
  const { storage, label } = flags.etcdServers.length > 0 ? await openEtcd(flags) : openSqlite(flags, false);
  opened.push(storage);
  const write = async (chunk: string) => {
    if (!io.stdout.write(chunk)) await once(io.stdout, 'drain');
  };
  const r = await exportStore(storage, label, write, io.now);
  io.stderr.write(`exported ${r.count.toLocaleString('en-US')} keys from ${label} at revision ${r.revision} (sha256 ${r.sha256})\n`);
  return 0;
}

async function runImport(flags: ApiServerFlags, io: ToolIo, opened: Storage[]): Promise<number> {
  const dump = await readDump(createInterface({ input: io.stdin, crlfDelay: Infinity }));
  const { storage, label } = flags.etcdServers.length > 0 ? await openEtcd(flags) : openSqlite(flags, true);
  opened.push(storage);
  const out = (s: string) => io.stdout.write(s);
  out(`dump: ${dump.records.length.toLocaleString('en-US')} keys from ${dump.header.source} at revision ${dump.header.revision} (written ${dump.header.createdAt})\n`);
  const r = await importDump(storage, dump);
  out(`imported into ${label}: ${r.created} created, ${r.unchanged} already present and identical, ${r.conflicts.length} present with other contents (left untouched)\n`);
  // Old resourceVersions mean nothing here: compacting at the head makes a client that resumes a
  // watch or list from one get 410 Gone and re-list, instead of reading unrelated history.
  const head = await storage.currentRevision();
  await storage.compact(head);
  out(`compacted ${label} at revision ${head}\n`);
  const report = compareSnapshots(dumpSnapshot(dump, `dump of ${dump.header.source}`), await snapshotStore(storage, label));
  out(formatReport(report));
  out(`note: resourceVersions are per store and all changed (source revision ${dump.header.revision}, target revision ${head}); every client must re-list: restart svc-node agents and controllers, and re-run kubectl watches.\n`);
  if (head < dump.header.revision) {
    out(`warning: the target revision (${head}) is below the source's (${dump.header.revision}); a client still holding a source resourceVersion above ${head} would wait for a "future" version instead of getting 410: restart every client before serving.\n`);
  }
  return report.ok ? 0 : 1;
}

async function runVerify(flags: ApiServerFlags, io: ToolIo, opened: Storage[]): Promise<number> {
  if (flags.etcdServers.length === 0) throw new FlagError('verify compares the SQLite store under --data-dir with etcd: --etcd-servers is required');
  const source = openSqlite(flags, false);
  opened.push(source.storage);
  const target = await openEtcd(flags);
  opened.push(target.storage);
  const report = compareSnapshots(await snapshotStore(source.storage, source.label), await snapshotStore(target.storage, target.label));
  io.stdout.write(formatReport(report));
  return report.ok ? 0 : 1;
}

function openSqlite(flags: ApiServerFlags, create: boolean): { storage: Storage; label: string } {
  const path = join(flags.dataDir, 'store', 'state.db');
  // Opening creates a missing database: an export of a mistyped --data-dir must fail, not print an empty dump.
  if (!create && !existsSync(path)) throw new Error(`no SQLite store at ${path} (check --data-dir)`);
  try {
    return { storage: SqliteStorage.open(path), label: `sqlite ${path}` };
  } catch (e) {
    if (e instanceof StorageError && e.code === 'Unavailable') throw new Error(`${e.message}: stop svc-apiserver first (it holds the SQLite store while it runs)`, { cause: e });
    throw e;
  }
}

async function openEtcd(flags: ApiServerFlags): Promise<{ storage: Storage; label: string }> {
  const storage = await EtcdStorage.connect({
    endpoints: flags.etcdServers,
    caFile: flags.etcdCaFile,
    certFile: flags.etcdCertFile,
    keyFile: flags.etcdKeyFile,
    prefix: flags.etcdPrefix,
  });
  return { storage, label: `etcd ${flags.etcdServers.join(',')} prefix ${flags.etcdPrefix}` };
}

function describe(e: unknown): string {
  if (e instanceof DumpFormatError) return `invalid dump: ${e.message}; nothing was imported`;
  if (e instanceof StorageError) return `store error (${e.code}): ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
