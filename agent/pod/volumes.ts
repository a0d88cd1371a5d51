/**
 * Pod volumes on the node, laid out as upstream's kubelet lays them out
 * (<root-dir>/pods/<uid>/volumes/<plugin>/<name>, plugin names with svc.io~ for kubernetes.io~):
 *   emptyDir  a directory (mode 0777, as upstream) that lives as long as the pod;
 *   hostPath  the host path itself, after the type check (DirectoryOrCreate, Directory, File ...);
 *   configMap, secret, downwardAPI, projected  files written atomically (./atomic-writer) with
 *             items, modes and defaultMode, refreshed on every sync so running containers see
 *             updates; projected sources are secret, configMap, downwardAPI and
 *             serviceAccountToken (./volume-projected, tokens from ./token-manager);
 *   persistentVolumeClaim  the bound PersistentVolume's hostPath or local path (./volume-pvc).
 *
 * Deliberate differences: emptyDir with medium Memory is a plain directory, and secret and
 * projected volumes are plain directories rather than tmpfs mounts (svc-node mounts nothing on
 * the host); their files get the spec's modes (defaultMode 0644 unless set) and the pod
 * directory above them is 0750 root-only, so other host users cannot read them. Other volume
 * types fail the pod's start with a message saying so.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, readdir, rm, stat, writeFile, chmod, open } from 'node:fs/promises';
import path from 'node:path';
import { writeAtomically, type FileToWrite } from './atomic-writer';
import { configMapValues, secretValues, type ConfigObjectGetter } from './config-objects';
import type { KeyToPath, Pod, Volume } from '../api/core-v1';
import type { TokenManager } from './token-manager';
import { downwardApiFiles, DownwardApiError, type DownwardApiItem, type NodeAllocatable } from './volume-downward-api';
import { keyFiles, projectedFiles, ProjectionError } from './volume-projected';
import { ClaimError, resolveClaim, type ClaimGetter } from './volume-pvc';
import { ensureLocalPathDir, LocalPathError } from './local-path';
import { InternalError } from '../errors';

/** A volume could not be set up; the pod stays ContainerCreating with this message (upstream's FailedMount). */
export class VolumeError extends InternalError {
  override readonly name = 'VolumeError';
  override readonly code = 'SVC_NODE_ERR_VOLUME';
  /** The claim whose local-path directory could not be made: its events say so too. */
  claim?: { namespace: string; name: string };
}

export const PLUGIN_EMPTY_DIR = 'svc.io~empty-dir';
export const PLUGIN_CONFIGMAP = 'svc.io~configmap';
export const PLUGIN_SECRET = 'svc.io~secret';
export const PLUGIN_PROJECTED = 'svc.io~projected';
export const PLUGIN_DOWNWARD_API = 'svc.io~downward-api';

const SUPPORTED = ['emptyDir', 'hostPath', 'configMap', 'secret', 'downwardAPI', 'projected', 'persistentVolumeClaim'];

export interface VolumeManagerOptions {
  /** <root-dir>/pods */
  podsDir: string;
  objects: ConfigObjectGetter;
  now?: () => number;
  /** Service account tokens for projected volumes; absent: serviceAccountToken sources fail. */
  tokens?: TokenManager;
  /** Claims and volumes for persistentVolumeClaim volumes; absent: such volumes fail. */
  claims?: ClaimGetter;
  /** The node's allocatable, for resourceFieldRef of limits a container does not set. */
  nodeAllocatable?: () => NodeAllocatable;
  /** localPathDir of the configuration: where local-path volumes' directories are made (absent: such volumes fail). */
  localPathDir?: string;
}

function sourceOf(v: Volume): string | undefined {
  return Object.keys(v).find((k) => k !== 'name' && v[k] !== undefined && v[k] !== null);
}

async function checkHostPath(p: string, type: string): Promise<void> {
  const fail = (what: string) => new VolumeError(`hostPath type check failed: ${p} is not a ${what}`);
  const st = await stat(p).catch(() => undefined);
  switch (type) {
    case '':
      return;
    case 'DirectoryOrCreate':
      if (!st) {
        await mkdir(p, { recursive: true, mode: 0o755 });
        return;
      }
      if (!st.isDirectory()) throw fail('directory');
      return;
    case 'Directory':
      if (!st?.isDirectory()) throw fail('directory');
      return;
    case 'FileOrCreate':
      if (!st) {
        await mkdir(path.dirname(p), { recursive: true, mode: 0o755 });
        const fh = await open(p, constants.O_CREAT | constants.O_WRONLY, 0o644);
        await fh.close();
        return;
      }
      if (!st.isFile()) throw fail('file');
      return;
    case 'File':
      if (!st?.isFile()) throw fail('file');
      return;
    case 'Socket':
      if (!st?.isSocket()) throw fail('socket');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) throw fail('character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) throw fail('block device');
      return;
    default:
      throw new VolumeError(`hostPath type ${JSON.stringify(type)} is not supported`);
  }
}

function projectFiles(values: Record<string, Buffer>, items: KeyToPath[] | undefined, defaultMode: number, what: string, optional: boolean): FileToWrite[] {
  try {
    return keyFiles(values, items, defaultMode, what, optional);
  } catch (e) {
    throw e instanceof ProjectionError ? new VolumeError(e.message) : e;
  }
}

/** Errors that mean "this volume cannot be set up (yet)": shown in the pod's status, retried. */
function isVolumeProblem(e: unknown): e is Error {
  return e instanceof VolumeError || e instanceof ProjectionError || e instanceof DownwardApiError || e instanceof ClaimError || e instanceof LocalPathError;
}

export class VolumeManager {
  private readonly now: () => number;

  constructor(private readonly opts: VolumeManagerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** <root-dir>/pods/<uid> */
  podDir(uid: string): string {
    return path.join(this.opts.podsDir, uid);
  }

  /**
   * Makes every volume of the pod ready and returns volume name -> host path. Idempotent;
   * configMap and secret contents are refreshed. Rejects VolumeError (bad or missing source).
   */
  async setUp(pod: Pod, signal?: AbortSignal): Promise<Map<string, string>> {
    const uid = pod.metadata.uid ?? '';
    const ns = pod.metadata.namespace ?? 'default';
    const volumesDir = path.join(this.podDir(uid), 'volumes');
    const out = new Map<string, string>();
    if ((pod.spec.volumes ?? []).length > 0) {
      // Root-only above the volumes (upstream: 0750), so other host users cannot reach secret or token files.
      await mkdir(this.podDir(uid), { recursive: true, mode: 0o750 });
      await chmod(this.podDir(uid), 0o750);
    }
    for (const v of pod.spec.volumes ?? []) {
      const src = sourceOf(v);
      if (!src || !SUPPORTED.includes(src)) {
        throw new VolumeError(`volume ${JSON.stringify(v.name)}: volume type ${JSON.stringify(src ?? 'none')} is not supported by svc-node (supported: ${SUPPORTED.join(', ')})`);
      }
      if (v.hostPath) {
        try {
          await checkHostPath(v.hostPath.path, v.hostPath.type ?? '');
        } catch (e) {
          throw e instanceof VolumeError ? e : new VolumeError(`volume ${JSON.stringify(v.name)}: ${(e as Error).message}`);
        }
        out.set(v.name, v.hostPath.path);
        continue;
      }
      if (v.emptyDir) {
        const dir = path.join(volumesDir, PLUGIN_EMPTY_DIR, v.name);
        await mkdir(dir, { recursive: true });
        await chmod(dir, 0o777);
        out.set(v.name, dir);
        continue;
      }
      if (v.configMap) {
        const name = v.configMap.name ?? '';
        const cm = await this.opts.objects.configMap(ns, name, signal);
        const dir = path.join(volumesDir, PLUGIN_CONFIGMAP, v.name);
        const optional = v.configMap.optional === true;
        if (!cm && !optional) throw new VolumeError(`MountVolume.SetUp failed for volume "${v.name}" : configmap "${name}" not found`);
        const files = cm ? projectFiles(configMapValues(cm), v.configMap.items, v.configMap.defaultMode ?? 0o644, `configmap ${ns}/${name}`, optional) : [];
        await this.write(dir, files, v.name);
        out.set(v.name, dir);
        continue;
      }
      if (v.secret) {
        const name = v.secret.secretName ?? '';
        const s = await this.opts.objects.secret(ns, name, signal);
        const dir = path.join(volumesDir, PLUGIN_SECRET, v.name);
        const optional = v.secret.optional === true;
        if (!s && !optional) throw new VolumeError(`MountVolume.SetUp failed for volume "${v.name}" : secret "${name}" not found`);
        const files = s ? projectFiles(secretValues(s), v.secret.items, v.secret.defaultMode ?? 0o644, `secret ${ns}/${name}`, optional) : [];
        await this.write(dir, files, v.name);
        out.set(v.name, dir);
        continue;
      }
      try {
        out.set(v.name, await this.setUpOther(pod, v, volumesDir, signal));
      } catch (e) {
        if (!isVolumeProblem(e) || e.message.startsWith('MountVolume.')) throw e;
        const err = new VolumeError(`MountVolume.SetUp failed for volume "${v.name}" : ${e.message}`);
        const claimName = (v['persistentVolumeClaim'] as { claimName?: string } | undefined)?.claimName;
        if (e instanceof LocalPathError && claimName) err.claim = { namespace: ns, name: claimName };
        throw err;
      }
    }
    return out;
  }

  /** downwardAPI, projected and persistentVolumeClaim volumes; rejects the errors isVolumeProblem names. */
  private async setUpOther(pod: Pod, v: Volume, volumesDir: string, signal?: AbortSignal): Promise<string> {
    const node = this.opts.nodeAllocatable?.() ?? { cpuMilli: 0, memory: 0 };
    if (v['downwardAPI']) {
      const src = v['downwardAPI'] as { items?: DownwardApiItem[]; defaultMode?: number };
      const dir = path.join(volumesDir, PLUGIN_DOWNWARD_API, v.name);
      await this.write(dir, downwardApiFiles(pod, src.items, src.defaultMode ?? 0o644, node), v.name);
      return dir;
    }
    if (v['projected']) {
      const tokens = this.opts.tokens;
      const token = tokens
        ? (ns: string, sa: string, spec: Parameters<TokenManager['get']>[2], sig?: AbortSignal) =>
            tokens.get(ns, sa, spec, sig).catch((e: Error) => {
              throw new ProjectionError(`failed to fetch token: ${e.message}`);
            })
        : undefined;
      const files = await projectedFiles(pod, v['projected'], { objects: this.opts.objects, node, ...(token ? { token } : {}) }, signal);
      const dir = path.join(volumesDir, PLUGIN_PROJECTED, v.name);
      await this.write(dir, files, v.name);
      return dir;
    }
    const claimSource = v['persistentVolumeClaim'] as { claimName?: string; readOnly?: boolean };
    if (!this.opts.claims) throw new VolumeError('persistent volume claims are not available on this node');
    const claimed = await resolveClaim(pod.metadata.namespace ?? 'default', claimSource, this.opts.claims, signal);
    if (claimed.localPath) {
      if (!this.opts.localPathDir) throw new VolumeError('local-path volumes are not available on this node');
      await ensureLocalPathDir(this.opts.localPathDir, claimed.path);
    } else if (claimed.check === 'local') {
      if (!(await stat(claimed.path).catch(() => undefined))) throw new ClaimError(`local volume "${claimed.volumeName}" path ${claimed.path} does not exist`);
    } else {
      await checkHostPath(claimed.path, claimed.check);
    }
    return claimed.path;
  }

  /** Removes the pod's directory (volumes included; hostPath sources are never under it). Idempotent. Call only once its containers are gone. */
  async tearDown(uid: string): Promise<void> {
    if (!uid || uid.includes('/') || uid.startsWith('.')) return;
    this.opts.tokens?.forgetPod(uid);
    await rm(this.podDir(uid), { recursive: true, force: true });
  }

  /** UIDs that have a directory under pods/. */
  async podUids(): Promise<string[]> {
    try {
      const entries = await readdir(this.opts.podsDir, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** A file for the container's termination message, created empty (upstream's terminationMessagePath mount). */
  async terminationLog(uid: string, container: string, attempt: number): Promise<string> {
    const dir = path.join(this.podDir(uid), 'containers', container);
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const file = path.join(dir, `termination-log-${attempt}`);
    if (!(await lstat(file).catch(() => undefined))) await writeFile(file, '', { mode: 0o666 });
    await chmod(file, 0o666);
    return file;
  }

  private async write(dir: string, files: FileToWrite[], name: string): Promise<void> {
    try {
      await writeAtomically(dir, files, this.now);
    } catch (e) {
      throw new VolumeError(`MountVolume.SetUp failed for volume "${name}" : ${(e as Error).message}`);
    }
  }
}
