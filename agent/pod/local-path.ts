/**
 * svc-node's half of svc-apiserver's local-path provisioner (apiserver/api/local-path.ts): the
 * directory of a local-path volume is created here when a pod first mounts it, and removed once
 * the volume is deleted (then the volume's cleanup finalizer is taken off, which lets the API
 * server remove it). Only directories directly under the configured localPathDir are ever made
 * or removed: a volume naming any other path is refused with a message saying so.
 *
 * Modes: the base directory 0700 (root only: it lists every volume on the node), each volume's
 * directory 0777, as k3s's provisioner, so that containers running as any user can write to it.
 */
import { chmod, mkdir, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { bothKeys } from '../../apiserver/api/group-names';
import { LOCAL_PATH_BASE_MODE, LOCAL_PATH_FINALIZER, LOCAL_PATH_NODE_LABEL, LOCAL_PATH_PROVISIONER, LOCAL_PATH_VOLUME_MODE } from '../../apiserver/api/local-path';
import type { KObject } from '../../apiserver/api/types';
import { InvalidArgumentError } from '../errors';

/** Why a local-path directory could not be made or is refused; the message reaches the pod's FailedMount event. */
export class LocalPathError extends InvalidArgumentError {
  override readonly name = 'LocalPathError';
  override readonly code = 'SVC_NODE_ERR_LOCAL_PATH';
}

/** The provisioned-by annotation (upstream pv.kubernetes.io/provisioned-by) in either spelling. */
const PROVISIONED_BY = bothKeys('pv.svc.io/provisioned-by');

/** Whether a PersistentVolume is one of svc's local-path volumes. */
export function isLocalPathVolume(pv: KObject): boolean {
  const a = pv.metadata.annotations ?? {};
  return PROVISIONED_BY.some((k) => a[k] === LOCAL_PATH_PROVISIONER) && !!pv.metadata.labels?.[LOCAL_PATH_NODE_LABEL];
}

/** The volume directory if it lies directly under baseDir; else a LocalPathError naming both. */
function checkedPath(baseDir: string, dir: string): string {
  const base = path.resolve(baseDir);
  const p = path.resolve(dir);
  if (path.dirname(p) !== base || path.basename(p).startsWith('.')) {
    throw new LocalPathError(`local-path volume directory ${dir} is not directly under this node's localPathDir ${base}`);
  }
  return p;
}

/**
 * Makes the volume's directory (the base directory too, when missing). A failure leaves nothing
 * it made behind and says why; an existing directory is kept as it is (the volume's data).
 */
export async function ensureLocalPathDir(baseDir: string, dir: string): Promise<void> {
  const p = checkedPath(baseDir, dir);
  const fail = (e: unknown) => new LocalPathError(`cannot create local-path volume directory ${p}: ${(e as Error).message}`);
  try {
    await mkdir(path.dirname(p), { recursive: true, mode: LOCAL_PATH_BASE_MODE });
  } catch (e) {
    throw fail(e);
  }
  try {
    await mkdir(p, { mode: LOCAL_PATH_VOLUME_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fail(e);
    if (!(await stat(p)).isDirectory()) throw new LocalPathError(`cannot create local-path volume directory ${p}: a file of that name exists`);
    return;
  }
  try {
    // mkdir's mode is masked by the umask.
    await chmod(p, LOCAL_PATH_VOLUME_MODE);
  } catch (e) {
    // Made here and still empty: take it away again.
    await rmdir(p).catch(() => undefined);
    throw fail(e);
  }
}

/** Removes a deleted volume's directory and everything in it; nothing when it is not there. */
export async function removeLocalPathDir(baseDir: string, dir: string): Promise<void> {
  await rm(checkedPath(baseDir, dir), { recursive: true, force: true });
}

/** The volume without the cleanup finalizer; undefined when it has none. */
export function withoutCleanupFinalizer(pv: KObject): KObject | undefined {
  const finalizers = pv.metadata.finalizers ?? [];
  if (!finalizers.includes(LOCAL_PATH_FINALIZER)) return undefined;
  return { ...pv, metadata: { ...pv.metadata, finalizers: finalizers.filter((f) => f !== LOCAL_PATH_FINALIZER) } };
}
