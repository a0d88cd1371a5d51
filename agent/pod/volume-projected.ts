/**
 * The files of a projected volume, as upstream's projected volume plugin collects them: each
 * source in order (secret, configMap, downwardAPI, serviceAccountToken) adds its files to one
 * directory, written together by the atomic writer. Items pick keys and paths; an item's mode
 * wins over the volume's defaultMode. A missing secret or configMap fails the volume unless the
 * source is optional. The token is a TokenRequest bound to the pod (./token-manager). Its file
 * mode follows upstream: the volume's defaultMode, but 0600 owned by the pod's user when every
 * container runs as the same runAsUser (upstream's fsUser) or the pod sets fsGroup; with fsGroup
 * every file of the volume also gets that group and group read (upstream SetVolumeOwnership on a
 * read-only volume).
 */
import type { FileToWrite } from './atomic-writer';
import { configMapValues, secretValues, type ConfigObjectGetter } from './config-objects';
import type { KeyToPath, Pod } from '../api/core-v1';
import { downwardApiFiles, type DownwardApiItem, type NodeAllocatable } from './volume-downward-api';
import type { TokenSpec } from './token-manager';
import { InvalidArgumentError } from '../errors';

/** Default lifetime of a projected token when the source names none (upstream: 1 h). */
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

export interface ProjectedSource {
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardApiItem[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
  [other: string]: unknown;
}

export interface ProjectedVolumeSource {
  sources?: ProjectedSource[];
  defaultMode?: number;
}

/** Gives a pod-bound token for the pod's service account (TokenManager.get). */
export type PodTokenSource = (namespace: string, serviceAccount: string, spec: TokenSpec, signal?: AbortSignal) => Promise<string>;

export interface ProjectionDeps {
  objects: ConfigObjectGetter;
  /** Absent: serviceAccountToken sources fail (the agent has no API access). */
  token?: PodTokenSource;
  node: NodeAllocatable;
}

/** A source that cannot be projected; the message is shown in the pod's status. */
export class ProjectionError extends InvalidArgumentError {
  override readonly name = 'ProjectionError';
  override readonly code = 'SVC_NODE_ERR_PROJECTION';
}

/** Selected keys (or all keys) of a secret's or configMap's values as files. */
export function keyFiles(values: Record<string, Buffer>, items: KeyToPath[] | undefined, defaultMode: number, what: string, optional: boolean): FileToWrite[] {
  if (!items || items.length === 0) return Object.entries(values).map(([k, data]) => ({ path: k, data, mode: defaultMode }));
  const out: FileToWrite[] = [];
  for (const it of items) {
    const data = values[it.key];
    if (data === undefined) {
      if (optional) continue;
      throw new ProjectionError(`configured to use key ${it.key} of ${what}, but the key is not present`);
    }
    out.push({ path: it.path, data, mode: it.mode ?? defaultMode });
  }
  return out;
}

/** Upstream FsUserFrom: the effective runAsUser of every init and regular container when they all have the same one. */
export function podFsUser(pod: Pod): number | undefined {
  let out: number | undefined;
  for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    const u = c.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser;
    if (u === undefined || (out !== undefined && out !== u)) return undefined;
    out = u;
  }
  return out;
}

/** Collects the files of every source of the volume. Rejects ProjectionError, or the API error of a failed read. */
export async function projectedFiles(pod: Pod, src: ProjectedVolumeSource, d: ProjectionDeps, signal?: AbortSignal): Promise<FileToWrite[]> {
  const ns = pod.metadata.namespace ?? 'default';
  const mode = src.defaultMode ?? 0o644;
  const fsGroup = pod.spec.securityContext?.fsGroup;
  const out: FileToWrite[] = [];
  for (const s of src.sources ?? []) {
    if (s.secret) {
      const name = s.secret.name ?? '';
      const optional = s.secret.optional === true;
      const secret = await d.objects.secret(ns, name, signal);
      if (!secret) {
        if (optional) continue;
        throw new ProjectionError(`secret "${name}" not found`);
      }
      out.push(...keyFiles(secretValues(secret), s.secret.items, mode, `secret ${ns}/${name}`, optional));
    } else if (s.configMap) {
      const name = s.configMap.name ?? '';
      const optional = s.configMap.optional === true;
      const cm = await d.objects.configMap(ns, name, signal);
      if (!cm) {
        if (optional) continue;
        throw new ProjectionError(`configmap "${name}" not found`);
      }
      out.push(...keyFiles(configMapValues(cm), s.configMap.items, mode, `configmap ${ns}/${name}`, optional));
    } else if (s.downwardAPI) {
      out.push(...downwardApiFiles(pod, s.downwardAPI.items, mode, d.node));
    } else if (s.serviceAccountToken) {
      const t = s.serviceAccountToken;
      if (!d.token) throw new ProjectionError('service account tokens are not available on this node');
      const token = await d.token(ns, pod.spec.serviceAccountName || 'default', {
        audiences: t.audience ? [t.audience] : [],
        expirationSeconds: t.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS,
        pod: { name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' },
      }, signal);
      const fsUser = podFsUser(pod);
      const owned = fsUser !== undefined || fsGroup !== undefined;
      out.push({ path: t.path, data: Buffer.from(token, 'utf8'), mode: owned ? 0o600 : mode, ...(fsUser !== undefined ? { uid: fsUser } : {}) });
    } else {
      const kind = Object.keys(s).find((k) => s[k] !== undefined && s[k] !== null) ?? 'none';
      throw new ProjectionError(`projected source ${JSON.stringify(kind)} is not supported by svc-node (supported: secret, configMap, downwardAPI, serviceAccountToken)`);
    }
  }
  if (fsGroup !== undefined) for (const f of out) Object.assign(f, { gid: fsGroup, mode: f.mode | 0o440 });
  return out;
}
