import type Database from 'better-sqlite3';

/**
 * The SQLite layout of the revision log, in the manner of kine: every write appends one row whose
 * rowid is the cluster-wide revision. The current value of a key is its newest row; a delete appends
 * a tombstone (deleted = 1) that carries the deleted value. Reads at an older revision take the
 * newest row at or below it, which gives consistent lists and watch replay from the same table.
 */

export const SCHEMA_VERSION = 1;

// AUTOINCREMENT (not plain rowid) because sqlite_sequence then remembers the highest revision ever
// written even when compaction deletes the newest row (a tombstone), so revisions are never reused.
const DDL = `
CREATE TABLE IF NOT EXISTS kv (
  revision INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value BLOB NOT NULL,
  written_at INTEGER NOT NULL
);
-- deleted is in the index so that counting live keys (list's remaining) never touches the table.
CREATE INDEX IF NOT EXISTS kv_key_revision ON kv (key, revision, deleted);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ${SCHEMA_VERSION});
INSERT OR IGNORE INTO meta (name, value) VALUES ('compact_revision', 0);
`;

/** Sets the connection's pragmas; synchronous decides what an acknowledged write survives. */
export function configure(db: Database.Database, synchronous: 'FULL' | 'NORMAL'): void {
  // One process owns the store, as one etcd member owns its data dir: the revision counter and the
  // watch fan-out live in this process, so a second writer would break both. EXCLUSIVE (set before
  // the first WAL access) holds the file lock for the connection's life and keeps the WAL index in
  // process memory (no -shm file).
  db.pragma('locking_mode = EXCLUSIVE');
  // WAL: readers never block the (single) writer, and a commit is one sequential append to the WAL.
  db.pragma('journal_mode = WAL');
  // FULL fsyncs the WAL on every commit, so a write that resolved survives kill -9 and power loss,
  // as etcd fsyncs its WAL before acknowledging. NORMAL survives a process crash but may lose the
  // last commits on power loss; it is several times faster and meant for tests and throwaway setups.
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = OFF');
}

/** Creates the tables on a new file and refuses files written by a newer schema. */
export function migrate(db: Database.Database): void {
  db.exec(DDL);
  const row = db.prepare<[], { value: number }>(`SELECT value FROM meta WHERE name = 'schema_version'`).get();
  const version = row?.value ?? 0;
  if (version > SCHEMA_VERSION) {
    throw new Error(`store schema version ${version} is newer than this binary's ${SCHEMA_VERSION}`);
  }
}

/** A full log row as the read paths need it. */
export interface LogRow {
  revision: number;
  key: string;
  created: number;
  deleted: number;
  create_revision: number;
  value: Buffer;
}

/** A log row joined with the value it replaced, for watch replay. */
export interface HistoryRow extends LogRow {
  prev_value: Buffer | null;
}

interface RangeParams {
  lo: string;
  hi: Buffer;
  rev: number;
}

/** Every statement the store runs, prepared once per connection. */
export interface Statements {
  latest: Database.Statement<[string], LogRow>;
  atRevision: Database.Statement<[string, number], LogRow>;
  insert: Database.Statement<[number, string, number, number, number, number, Buffer, number]>;
  listFrom: Database.Statement<[RangeParams & { limit: number }], LogRow>;
  listAfter: Database.Statement<[RangeParams & { limit: number }], LogRow>;
  countAfter: Database.Statement<[RangeParams], { n: number }>;
  history: Database.Statement<[{ after: number; lo: string; hi: Buffer; limit: number }], HistoryRow>;
  sequence: Database.Statement<[], { seq: number }>;
  metaGet: Database.Statement<[string], { value: number }>;
  metaSet: Database.Statement<[number, string]>;
  compactSuperseded: Database.Statement<[{ from: number; to: number }]>;
  compactTombstones: Database.Statement<[{ from: number; to: number }]>;
  firstWrittenSince: Database.Statement<[{ after: number; t: number }], { revision: number }>;
}

const COLUMNS = 'kv.revision, kv.key, kv.created, kv.deleted, kv.create_revision, kv.value';

// The newest row of each key at or below :rev, skipping tombstones. NOT EXISTS walks the
// (key, revision) index in key order, so LIMIT stops the scan early with no sort.
function liveAt(lowerBound: '>=' | '>'): string {
  return `kv.key ${lowerBound} :lo AND kv.key < CAST(:hi AS TEXT) AND kv.revision <= :rev AND kv.deleted = 0
    AND NOT EXISTS (SELECT 1 FROM kv n WHERE n.key = kv.key AND n.revision > kv.revision AND n.revision <= :rev)`;
}

export function prepare(db: Database.Database): Statements {
  return {
    latest: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE kv.key = ? ORDER BY kv.revision DESC LIMIT 1`),
    atRevision: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE kv.key = ? AND kv.revision <= ? ORDER BY kv.revision DESC LIMIT 1`),
    insert: db.prepare(
      `INSERT INTO kv (revision, key, created, deleted, create_revision, prev_revision, value, written_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listFrom: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE ${liveAt('>=')} ORDER BY kv.key LIMIT :limit`),
    listAfter: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE ${liveAt('>')} ORDER BY kv.key LIMIT :limit`),
    countAfter: db.prepare(`SELECT count(*) AS n FROM kv WHERE ${liveAt('>')}`),
    // Replay walks the revision (primary key) range; the unary + keeps the planner from choosing the
    // key index, which would need a sort of the prefix's whole history.
    history: db.prepare(
      `SELECT ${COLUMNS}, p.value AS prev_value FROM kv
       LEFT JOIN kv p ON p.revision = kv.prev_revision AND kv.created = 0
       WHERE kv.revision > :after AND +kv.key >= :lo AND +kv.key < CAST(:hi AS TEXT)
       ORDER BY kv.revision LIMIT :limit`,
    ),
    sequence: db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'kv'`),
    metaGet: db.prepare(`SELECT value FROM meta WHERE name = ?`),
    metaSet: db.prepare(`UPDATE meta SET value = ? WHERE name = ?`),
    // After a compaction at :from every key has at most one row at or below :from, so a row becomes
    // superseded only by a newer row of its key written in (:from, :to].
    compactSuperseded: db.prepare(
      `DELETE FROM kv WHERE revision IN (
         SELECT o.revision FROM kv n JOIN kv o ON o.key = n.key AND o.revision < n.revision
         WHERE n.revision > :from AND n.revision <= :to)`,
    ),
    // What is left at or below :to is the newest row of each key there; a tombstone among them only
    // says "absent", which a missing row says as well.
    compactTombstones: db.prepare(`DELETE FROM kv WHERE deleted = 1 AND revision > :from AND revision <= :to`),
    firstWrittenSince: db.prepare(
      `SELECT revision FROM kv WHERE revision > :after AND written_at >= :t ORDER BY revision LIMIT 1`,
    ),
  };
}
