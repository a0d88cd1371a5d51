import { rm } from 'node:fs/promises';
import { listRotatedFiles } from './rotated-log-files';

/**
 * Deletes a container's live log and its rotated files (<log>.*), as upstream's container log
 * manager Clean does before the kubelet removes a dead container: the runtime does not delete
 * the log file the kubelet asked it to write. A missing file or directory is not an error.
 */
export async function removeContainerLogs(logPath: string): Promise<void> {
  if (logPath === '') return;
  let rotated: string[] = [];
  try {
    rotated = await listRotatedFiles(logPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  for (const f of [logPath, ...rotated]) await rm(f, { force: true });
}
