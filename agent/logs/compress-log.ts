/**
 * Gzips one rotated log file in a way a crash cannot corrupt: the output goes to <name>.gz.tmp,
 * is flushed to disk, and only then renamed to <name>.gz; the uncompressed file is removed last.
 * Whatever a crash leaves behind (a .tmp, or <name> next to a finished <name>.gz) is recognised
 * and removed by the next rotation (see rotated-log-files.ts), so a .gz is always complete.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { COMPRESSED_SUFFIX, TMP_SUFFIX } from './rotated-log-files';

/** Replaces `file` by `file`.gz (same mode); resolves the compressed file's path. Rejects with the fs error, leaving `file` in place. */
export async function compressLog(file: string): Promise<string> {
  const compressed = file + COMPRESSED_SUFFIX;
  const tmp = compressed + TMP_SUFFIX;
  const { mode } = await stat(file);
  try {
    // flush: the stream fsyncs the file before closing it, so the rename below publishes whole data.
    await pipeline(createReadStream(file), createGzip(), createWriteStream(tmp, { flags: 'w', mode: mode & 0o7777, flush: true }));
    await rename(tmp, compressed);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await rm(file);
  return compressed;
}
