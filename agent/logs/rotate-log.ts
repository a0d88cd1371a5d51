/**
 * One rotation of one container's live log, in upstream's order: leftovers of an interrupted
 * rotation are removed, then the oldest rotated files beyond the count limit, then every rotated
 * file still uncompressed is gzipped (after this rotation all of them are older than the newest),
 * and last the live file is renamed to <log>.<stamp> and the runtime asked to reopen it. When the
 * runtime cannot reopen, the file is renamed back so the container's output keeps landing in
 * <log> and the next pass tries again.
 */
import { access, rename, rm } from 'node:fs/promises';
import { compressLog } from './compress-log';
import { COMPRESSED_SUFFIX, excessFiles, listRotatedFiles, rotatedName, splitLeftovers } from './rotated-log-files';

export interface RotateLogDeps {
  /** Milliseconds since the epoch; names the rotated file. */
  now(): number;
  /** Asks the runtime to reopen the container's log (CRI ReopenContainerLog). */
  reopen(): Promise<void>;
}

export type RotateOutcome =
  | {
      kind: 'rotated';
      /** The live file's new name. */
      rotated: string;
      /** Leftovers and rotated files beyond the limit that were deleted. */
      removed: string[];
      /** Files gzipped (their .gz names). */
      compressed: string[];
    }
  /** A file with this second's name exists already (rotations less than a second apart): nothing renamed; try next pass. */
  | { kind: 'name-taken'; rotated: string }
  /** Reopen failed: the rotated file was renamed back to the live name unless restoreError says otherwise. */
  | { kind: 'reopen-failed'; rotated: string; error: unknown; restoreError?: unknown };

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** Rotates `log` keeping at most maxFiles files (live included). Rejects with the first fs error; the steps before it stay done. */
export async function rotateLog(log: string, maxFiles: number, deps: RotateLogDeps): Promise<RotateOutcome> {
  const { inUse, leftovers } = splitLeftovers(await listRotatedFiles(log));
  const excess = excessFiles(inUse, maxFiles);
  const removed: string[] = [];
  // Excess files go oldest first, so a reader still working through the older files is disturbed last.
  for (const f of [...leftovers, ...excess]) {
    await rm(f, { force: true });
    removed.push(f);
  }
  const compressed: string[] = [];
  for (const f of inUse.filter((x) => !excess.includes(x) && !x.endsWith(COMPRESSED_SUFFIX))) {
    compressed.push(await compressLog(f));
  }

  const rotated = rotatedName(log, deps.now());
  if ((await exists(rotated)) || (await exists(rotated + COMPRESSED_SUFFIX))) return { kind: 'name-taken', rotated };
  await rename(log, rotated);
  try {
    await deps.reopen();
  } catch (error) {
    // Renaming back loses nothing the container wrote meanwhile: it still writes to the same inode.
    const restoreError = await rename(rotated, log).then(
      () => undefined,
      (e: unknown) => e,
    );
    return restoreError === undefined ? { kind: 'reopen-failed', rotated, error } : { kind: 'reopen-failed', rotated, error, restoreError };
  }
  return { kind: 'rotated', rotated, removed, compressed };
}
