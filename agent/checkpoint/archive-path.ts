/** Where checkpoint archives go: <root-dir>/checkpoints/checkpoint-<pod>_<namespace>-<container>-<RFC3339>.tar (spec 4.11, upstream's kubelet naming). */
import path from 'node:path';
import type { CheckpointTarget } from './checkpoint-request';

export const CHECKPOINTS_DIR = 'checkpoints';

export function checkpointsDir(rootDir: string): string {
  return path.join(rootDir, CHECKPOINTS_DIR);
}

/** RFC 3339 in UTC with whole seconds, as Go's time.RFC3339 prints a UTC time. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The archive path; the target's names must already be validated (they become a file name). */
export function archivePath(rootDir: string, t: CheckpointTarget, nowMs: number): string {
  return path.join(checkpointsDir(rootDir), `checkpoint-${t.pod}_${t.namespace}-${t.container}-${rfc3339(nowMs)}.tar`);
}
