import type { Storage } from '../storage/storage';
import { DumpDigest, headerLine, recordLine, trailerLine, valueHash } from './dump-format';
import { readAll } from './read-all';

export interface ExportResult {
  count: number;
  /** The source revision the dump was read at. */
  revision: number;
  sha256: string;
}

/**
 * Writes every key of the store, verbatim, as a dump (see dump-format.ts): header, records in key
 * order at one revision, trailer. write must apply backpressure (resolve when the sink can take
 * more). Errors: the store's.
 */
export async function exportStore(storage: Storage, source: string, write: (chunk: string) => Promise<void>, now: () => Date): Promise<ExportResult> {
  const digest = new DumpDigest();
  let revision = 0;
  let started = false;
  // readAll reports the snapshot's revision as soon as it read the first page, before any record.
  const records = readAll(storage, 500, (r) => (revision = r));
  const header = () => write(headerLine({ revision, source, createdAt: now().toISOString() }));
  for await (const kv of records) {
    if (!started) await header();
    started = true;
    digest.add(kv.key, valueHash(kv.value));
    await write(recordLine(kv.key, kv.value));
  }
  if (!started) await header(); // an empty store still gets a header and a trailer
  const sha256 = digest.hex();
  await write(trailerLine(digest.count, sha256));
  return { count: digest.count, revision, sha256 };
}
