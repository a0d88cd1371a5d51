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
  let headerWritten = false;
  const header = async (rev: number) => {
    revision = rev;
    await write(headerLine({ revision: rev, source, createdAt: now().toISOString() }));
    headerWritten = true;
  };
  // The header needs the revision, known only once the first page is read.
  const it = readAll(storage, 500, (r) => (revision = r));
  for await (const kv of it) {
    if (!headerWritten) await header(revision);
    digest.add(kv.key, valueHash(kv.value));
    await write(recordLine(kv.key, kv.value));
  }
  if (!headerWritten) await header(revision || (await storage.currentRevision()));
  const sha256 = digest.hex();
  await write(trailerLine(digest.count, sha256));
  return { count: digest.count, revision, sha256 };
}
