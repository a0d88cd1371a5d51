import { createHmac, timingSafeEqual } from 'node:crypto';
import { stringify } from 'yaml';
import { isAlreadyExists, isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import { controllerContext } from '../store/system-context';
import type { ResourceRegistry } from '../registry/builtin';
import type { ObjectStore } from '../store/object-store';

/** Where the cluster-info ConfigMap lives and what its keys are called (spec 2.7, 5.9). */
export const CLUSTER_INFO_NAMESPACE = 'svc-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

/**
 * The kubeconfig published in cluster-info: one unnamed cluster with the CA data and server and
 * no users, as kubeadm writes it (joining nodes read it anonymously and check its signature).
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(caPem).toString('base64'), server }, name: '' }],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
}

/**
 * Creates svc-public/cluster-info with the kubeconfig when it is missing, or updates its
 * kubeconfig when server or CA changed (signatures are then renewed by the bootstrap signer).
 * Idempotent; call once the store is reachable and svc-public exists.
 */
export async function ensureClusterInfo(store: ObjectStore, types: ResourceRegistry, o: { server: string; caPem: string }): Promise<void> {
  const t = types.lookup('', 'v1', 'configmaps');
  if (!t) throw new Error('configmaps type not registered');
  const kubeconfig = clusterInfoKubeconfig(o.server, o.caPem);
  const ctx = controllerContext('bootstrap-signer');
  await store.update(
    t,
    CLUSTER_INFO_NAMESPACE,
    CLUSTER_INFO_NAME,
    (cur: KObject | null) => {
      if (!cur) return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE }, data: { [KUBECONFIG_KEY]: kubeconfig } };
      const data = { ...((cur.data as Record<string, string> | undefined) ?? {}) };
      data[KUBECONFIG_KEY] = kubeconfig;
      return { ...cur, data };
    },
    ctx,
    true,
  ).catch((err: unknown) => {
    if (isAlreadyExists(err) || isConflict(err)) return; // someone else made or changed it at the same moment
    throw err;
  });
}

function b64url(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

/**
 * A detached JWS (5.9) of content: protected header {"alg":"HS256","kid":<token id>} (the bytes
 * go-jose produces, so kubeadm's recomputation compares equal), HMAC-SHA256 keyed with the whole
 * token "<id>.<secret>", rendered as "<header>..<signature>" with the payload left out.
 */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: tokenId }));
  const sig = createHmac('sha256', `${tokenId}.${tokenSecret}`).update(`${header}.${b64url(content)}`).digest('base64url');
  return `${header}..${sig}`;
}

/** Verifies a detached signature the way a joining node does: HS256 only, key id the token id. */
export function verifyDetachedSignature(content: string, detached: string, tokenId: string, tokenSecret: string): boolean {
  const parts = detached.split('.');
  if (parts.length !== 3 || parts[1] !== '') return false;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  const h = header as { alg?: unknown; kid?: unknown };
  if (h.alg !== 'HS256' || h.kid !== tokenId) return false;
  const want = createHmac('sha256', `${tokenId}.${tokenSecret}`).update(`${parts[0]}.${b64url(content)}`).digest();
  const got = Buffer.from(parts[2], 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}
