/**
 * persistentVolumeClaim volumes: the claim is resolved to the PersistentVolume it is bound to,
 * and that volume's node-local path is used, as upstream's kubelet resolves a claim before
 * mounting (desired state of world populator: claim bound, PV's claimRef naming that claim). Only
 * volumes svc-node can use without mounting anything are supported: hostPath and local. A claim
 * that is not bound yet keeps the pod waiting (retried on the next sync) with a message saying
 * so; any other volume type fails with a message naming the type.
 */
import type { KObject } from '../../apiserver/api/types';
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import type { ResourceRef } from '../client/resources';
import { InvalidArgumentError } from '../errors';
import { isLocalPathVolume } from './local-path';

export const claimsResource: ResourceRef = { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true };
export const volumesResource: ResourceRef = { group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false };

/** Reads claims and volumes; undefined when absent, rejects on other failures. */
export interface ClaimGetter {
  claim(namespace: string, name: string, signal?: AbortSignal): Promise<KObject | undefined>;
  volume(name: string, signal?: AbortSignal): Promise<KObject | undefined>;
}

export class ApiClaims implements ClaimGetter {
  constructor(
    private readonly client: ApiClient,
    private readonly timeoutMs = 10_000,
  ) {}

  claim(namespace: string, name: string, signal?: AbortSignal): Promise<KObject | undefined> {
    return this.get(claimsResource, name, namespace, signal);
  }

  volume(name: string, signal?: AbortSignal): Promise<KObject | undefined> {
    return this.get(volumesResource, name, undefined, signal);
  }

  private async get(r: ResourceRef, name: string, namespace: string | undefined, signal?: AbortSignal): Promise<KObject | undefined> {
    try {
      return await this.client.get(r, name, { ...(namespace ? { namespace } : {}), timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (e instanceof ClientError && e.status === 404) return undefined;
      throw e;
    }
  }
}

/** A claim that cannot be used (yet); the message is shown in the pod's status. */
export class ClaimError extends InvalidArgumentError {
  override readonly name = 'ClaimError';
  override readonly code = 'SVC_NODE_ERR_CLAIM';
}

export interface ClaimedPath {
  path: string;
  /** The hostPath type to check ('' for none), or 'local' for a local volume (must exist). */
  check: string;
  volumeName: string;
  readOnly: boolean;
  /** One of svc-apiserver's local-path volumes: its directory is made here, under localPathDir (./local-path). */
  localPath: boolean;
}

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Resolves the claim of a persistentVolumeClaim volume source to a host path. Rejects ClaimError. */
export async function resolveClaim(namespace: string, source: { claimName?: string; readOnly?: boolean }, claims: ClaimGetter, signal?: AbortSignal): Promise<ClaimedPath> {
  const name = source.claimName ?? '';
  const claim = await claims.claim(namespace, name, signal);
  if (!claim) throw new ClaimError(`persistentvolumeclaim "${name}" not found`);
  if (claim.metadata.deletionTimestamp) throw new ClaimError(`can't start pod because PVC ${namespace}/${name} is being deleted`);
  const volumeName = str(rec(claim.spec)?.volumeName);
  if (str(rec(claim.status)?.phase) !== 'Bound' || volumeName === '') {
    throw new ClaimError(`error processing PVC ${namespace}/${name}: PVC is not bound (pod has unbound immediate PersistentVolumeClaims)`);
  }
  const pv = await claims.volume(volumeName, signal);
  if (!pv) throw new ClaimError(`error processing PVC ${namespace}/${name}: persistentvolume "${volumeName}" not found`);
  const spec = rec(pv.spec) ?? {};
  const ref = rec(spec.claimRef);
  if (!ref || str(ref.name) !== name || (str(ref.namespace) || namespace) !== namespace || (str(ref.uid) !== '' && str(ref.uid) !== claim.metadata.uid)) {
    throw new ClaimError(`error processing PVC ${namespace}/${name}: the PV "${volumeName}" is not bound to this claim (its claimRef names another)`);
  }
  const readOnly = source.readOnly === true;
  const hostPath = rec(spec.hostPath);
  const localPath = isLocalPathVolume(pv);
  if (hostPath) return { path: str(hostPath.path), check: str(hostPath.type), volumeName, readOnly, localPath };
  const local = rec(spec.local);
  if (local) return { path: str(local.path), check: 'local', volumeName, readOnly, localPath };
  const known = Object.keys(spec).filter((k) => !['accessModes', 'capacity', 'claimRef', 'persistentVolumeReclaimPolicy', 'storageClassName', 'mountOptions', 'volumeMode', 'nodeAffinity', 'volumeAttributesClassName'].includes(k));
  throw new ClaimError(`persistent volume "${volumeName}" of type ${JSON.stringify(known[0] ?? 'none')} is not supported by svc-node (supported: hostPath, local)`);
}
