import { randomInt } from 'node:crypto';
import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { get, recs, strAt, type JsonMap } from '../registry/obj-access';
import { podReferences } from '../registry/types/pod-references';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { isMirrorPod } from '../api/well-known';

/** Reads a service account; null when absent. */
export type ServiceAccountGetter = (namespace: string, name: string) => Promise<KObject | null>;

/*
 * The names below are upstream's. The spec names none of them, and the mount path and the
 * ConfigMap are what in-cluster clients (client-go's InClusterConfig, kubectl in a pod) read, so
 * keeping them lets stock clients run unchanged in svc pods.
 */
/** Prefix of the generated token volume's name (upstream ServiceAccountVolumeName). */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** Where every container sees the token, CA and namespace (upstream DefaultAPITokenMountPath). */
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The ConfigMap the root CA publisher keeps in every namespace, and its key. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const ROOT_CA_KEY = 'ca.crt';
/** Upstream's token lifetime for the projected token: an hour plus 7 s, recognisable in audits. */
export const TOKEN_EXPIRATION_SECONDS = 3607;

/** Upstream's random-name alphabet (no vowels, no look-alike digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export interface ServiceAccountOptions {
  /** How often to look again for the `default` account, which the service account controller creates right after the namespace (upstream: 10 tries). */
  defaultRetries: number;
  retryDelayMs: number;
  sleep?: (ms: number) => Promise<void>;
  /** Random integer in [0, n); default crypto.randomInt. */
  random?: (n: number) => number;
}

/** The projected volume upstream's plugin adds: a bound token, the cluster CA and the namespace. */
export function tokenVolume(name: string): JsonMap {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: ROOT_CA_KEY, path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/** Upstream shouldAutomount: the pod's field wins, then the account's, and the default is to mount. */
function shouldAutomount(sa: KObject, pod: KObject): boolean {
  const podSpec = (pod.spec ?? {}) as JsonMap;
  if (typeof podSpec.automountServiceAccountToken === 'boolean') return podSpec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

/**
 * ServiceAccount admission (upstream plugin of that name, Appendix B): a new pod runs as
 * spec.serviceAccountName (the registry already defaults it to `default`), and that account must
 * exist in the pod's namespace; `default` is looked up a few more times because it is created
 * asynchronously with the namespace. Mirror pods are never changed (the registry gives them no
 * account either) and may not name an account, reference secrets or project a token. Unless the pod or its account opts out (automountServiceAccountToken false), the
 * mutating phase adds the projected token volume `kube-api-access-<5 random>` and mounts it
 * read-only at TOKEN_MOUNT_PATH in every init container and container that does not already
 * mount something there (upstream mountServiceAccountToken; ephemeral containers are added later
 * through their own sub-resource and are left alone, as upstream). A pod without
 * imagePullSecrets gets its account's.
 */
export class ServiceAccountAdmission implements AdmissionPlugin {
  readonly name = 'ServiceAccount';
  /** Pods whose account the mutating phase already found, so validate need not read it again. */
  private readonly found = new WeakMap<KObject, string>();

  constructor(
    private readonly getAccount: ServiceAccountGetter,
    private readonly opts: ServiceAccountOptions = { defaultRetries: 10, retryDelayMs: 150 },
  ) {}

  /** Adds the token volume and mounts; rejects (403) a pod whose account does not exist. Idempotent. */
  async mutate(a: AdmissionAttributes): Promise<void> {
    if (!isPodCreate(a)) return;
    const pod = a.object!;
    if (isMirrorPod(pod)) return;
    const name = strAt(pod, 'spec', 'serviceAccountName') || 'default';
    const sa = await this.lookup(a, name);
    this.found.set(pod, name);
    if (shouldAutomount(sa, pod)) this.mountToken(pod);
    // Upstream: a pod naming no image pull secrets gets its account's.
    const spec = pod.spec as JsonMap;
    const pullSecrets = recs(sa.imagePullSecrets);
    if (recs(spec.imagePullSecrets).length === 0 && pullSecrets.length > 0) spec.imagePullSecrets = pullSecrets.map((r) => ({ name: r.name }));
  }

  /** Rejects a pod whose service account does not exist (403, as upstream). */
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPodCreate(a)) return;
    const pod = a.object!;
    const name = strAt(pod, 'spec', 'serviceAccountName') || 'default';
    if (isMirrorPod(pod)) {
      const why = mirrorPodRefusal(pod);
      if (why) throw errors.forbidden(`pods "${pod.metadata.name ?? ''}" is forbidden: ${why}`);
      return;
    }
    if (this.found.get(pod) === name) return;
    await this.lookup(a, name);
  }

  private async lookup(a: AdmissionAttributes, name: string): Promise<KObject> {
    const tries = name === 'default' ? this.opts.defaultRetries : 1;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    for (let i = 0; i < tries; i++) {
      if (i > 0) await sleep(this.opts.retryDelayMs);
      const sa = await this.getAccount(a.namespace, name);
      if (sa) return sa;
    }
    const pod = a.object!;
    throw errors.forbidden(`pods "${pod.metadata.name ?? pod.metadata.generateName ?? ''}" is forbidden: error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
  }

  private mountToken(pod: KObject): void {
    const spec = (pod.spec ?? (pod.spec = {})) as JsonMap;
    const volumes = recs(spec.volumes);
    // An earlier run (a conflict retry) or the client already added one: reuse its name.
    let volumeName = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX))?.name as string | undefined;
    const hasVolume = volumeName !== undefined;
    volumeName ??= this.generateName();
    let needed = false;
    for (const list of [spec.initContainers, spec.containers]) {
      for (const c of recs(list)) {
        const mounts = recs(c.volumeMounts);
        if (mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
        c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
        needed = true;
      }
    }
    if (needed && !hasVolume) spec.volumes = [...volumes, tokenVolume(volumeName)];
  }

  /** No clash is possible: a pod that has a volume with the prefix reuses it. */
  private generateName(): string {
    const random = this.opts.random ?? randomInt;
    let s = '';
    for (let i = 0; i < 5; i++) s += ALPHABET[random(ALPHABET.length)];
    return TOKEN_VOLUME_PREFIX + s;
  }
}

function isPodCreate(a: AdmissionAttributes): boolean {
  return a.type.group === '' && a.type.resource === 'pods' && a.operation === 'CREATE' && !a.subresource && !!a.object;
}

/**
 * Upstream's limits on mirror pods, whoever creates them: no service account (not even
 * "default": a mirror pod runs with none), no secrets, no projected service account token.
 */
function mirrorPodRefusal(pod: KObject): string | undefined {
  if (strAt(pod, 'spec', 'serviceAccountName')) return 'a mirror pod may not reference service accounts';
  if (podReferences(pod).secrets.size > 0) return 'a mirror pod may not reference secrets';
  const projected = recs(get(pod, 'spec', 'volumes')).flatMap((v) => recs(get(v, 'projected', 'sources')));
  if (projected.some((src) => src.serviceAccountToken !== undefined && src.serviceAccountToken !== null)) return 'a mirror pod may not use service account token volume projection';
  return undefined;
}
