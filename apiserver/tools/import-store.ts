import { StorageError, type Storage } from '../storage/storage';
import { DUMP_KIND, DumpDigest, DumpFormatError, parseLine, valueHash, type DumpHeader } from './dump-format';
import type { Snapshot } from './verify';

/** A dump read completely and checked against its trailer. */
export interface ParsedDump {
  header: DumpHeader;
  records: Array<{ key: string; value: Buffer }>;
}

export interface ImportResult {
  /** Keys written. */
  created: number;
  /** Keys the target already held with identical bytes (a re-run after an interrupted import). */
  unchanged: number;
  /** Keys the target already held with other bytes: left untouched, reported (verification then fails). */
  conflicts: string[];
}

/**
 * Reads a whole dump and checks it before anything is written: one header first, records with
 * unique keys, then a trailer whose count and digest match. A truncated or edited file is refused
 * with DumpFormatError, so a cluster is never half-migrated from a bad file. (The dump is held in
 * memory: stores this tool migrates are SQLite-sized.)
 */
export async function readDump(lines: AsyncIterable<string>): Promise<ParsedDump> {
  let header: DumpHeader | undefined;
  const records: ParsedDump['records'] = [];
  const seen = new Set<string>();
  const digest = new DumpDigest();
  let ended = false;
  let lineNo = 0;
  for await (const raw of lines) {
    lineNo++;
    const line = raw.trim();
    if (line === '') continue;
    if (ended) throw new DumpFormatError(`line ${lineNo}: data after the trailer`);
    const parsed = parseLine(line, lineNo);
    if (parsed.type === 'header') {
      if (header) throw new DumpFormatError(`line ${lineNo}: a second header`);
      header = parsed.header;
      continue;
    }
    if (!header) throw new DumpFormatError(`line ${lineNo}: the dump does not start with a ${DUMP_KIND} header`);
    if (parsed.type === 'record') {
      if (seen.has(parsed.key)) throw new DumpFormatError(`line ${lineNo}: key ${parsed.key} appears twice`);
      seen.add(parsed.key);
      digest.add(parsed.key, valueHash(parsed.value));
      records.push({ key: parsed.key, value: parsed.value });
      continue;
    }
    ended = true;
    if (parsed.trailer.count !== digest.count) throw new DumpFormatError(`trailer says ${parsed.trailer.count} keys, the file holds ${digest.count}`);
    if (parsed.trailer.sha256 !== digest.hex()) throw new DumpFormatError('the records do not match the trailer digest: the file was altered');
  }
  if (!header) throw new DumpFormatError('empty input: no dump header');
  if (!ended) throw new DumpFormatError(`no trailer after ${digest.count} keys: the dump is truncated`);
  return { header, records };
}

/** The per-key hashes of a dump, as the verification compares them with a store. */
export function dumpSnapshot(d: ParsedDump, label: string): Snapshot {
  return { label, revision: 0, hashes: new Map(d.records.map((r) => [r.key, valueHash(r.value)])) };
}

/**
 * Creates every key of the dump in the target with its exact bytes, `concurrency` writes in flight.
 * A key that exists already is compared, never overwritten. Errors: the store's (Unavailable etc.);
 * keys written before such an error stay, and running the import again completes it.
 */
export async function importDump(storage: Storage, d: ParsedDump, concurrency = 16): Promise<ImportResult> {
  const result: ImportResult = { created: 0, unchanged: 0, conflicts: [] };
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < d.records.length) {
      const { key, value } = d.records[next++];
      try {
        await storage.create(key, value);
        result.created++;
      } catch (e) {
        if (!(e instanceof StorageError && e.code === 'AlreadyExists')) {
          failed = true; // the other workers stop taking keys
          throw e;
        }
        const cur = await storage.get(key);
        if (cur && cur.value.equals(value)) result.unchanged++;
        else result.conflicts.push(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, d.records.length)) }, worker));
  result.conflicts.sort();
  return result;
}
