/**
 * Service account tokens for projected volumes, as upstream's kubelet token manager: one
 * TokenRequest per (pod, account, audiences, lifetime), bound to the pod so that the token dies
 * with it, cached and handed out again until it is due for refresh. Due means 80% of its lifetime
 * has passed or it is older than 24 h (minus up to 10 s of jitter so that pods started together
 * do not refresh together). Volumes are set up again on every pod sync (the resync period), which
 * is when a due token is replaced and rewritten atomically; containers see the new file without
 * a restart. When the API server cannot issue a new token, the cached one is used while it is
 * still valid.
 */
import type { ApiClient } from '../client/api-client';
import type { ResourceRef } from '../client/resources';

export const serviceAccountsResource: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true };

/** Upstream's bounds: refresh a token after 24 h whatever its lifetime, jitter up to 10 s. */
export const MAX_TTL_MS = 24 * 3600_000;
export const MAX_JITTER_MS = 10_000;

export interface BoundPod {
  name: string;
  uid: string;
}

export interface TokenSpec {
  /** Empty: the API server's own audiences. */
  audiences: string[];
  expirationSeconds: number;
  pod: BoundPod;
}

export interface IssuedToken {
  token: string;
  /** Epoch ms. */
  expiresAt: number;
  /** The lifetime the server granted (it may cut the requested one). */
  expirationSeconds: number;
}

/** Issues a token for a service account bound to a pod (POST .../serviceaccounts/{name}/token). Rejects when the server refuses or is unreachable. */
export interface TokenRequester {
  request(namespace: string, serviceAccount: string, spec: TokenSpec, signal?: AbortSignal): Promise<IssuedToken>;
}

/** TokenRequest over the API client; the node's credentials are authorized by the Node authorizer and NodeRestriction. */
export class ApiTokenRequester implements TokenRequester {
  constructor(
    private readonly client: ApiClient,
    private readonly timeoutMs = 10_000,
  ) {}

  async request(namespace: string, serviceAccount: string, spec: TokenSpec, signal?: AbortSignal): Promise<IssuedToken> {
    const body = {
      apiVersion: 'authentication.svc.io/v1',
      kind: 'TokenRequest',
      metadata: { name: serviceAccount, namespace },
      spec: {
        audiences: spec.audiences,
        expirationSeconds: spec.expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: spec.pod.name, uid: spec.pod.uid },
      },
    };
    const out = await this.client.create(serviceAccountsResource, body, { namespace, subresource: 'token', timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) });
    const status = (out as { status?: { token?: unknown; expirationTimestamp?: unknown } }).status ?? {};
    const granted = (out as { spec?: { expirationSeconds?: unknown } }).spec?.expirationSeconds;
    const expiresAt = typeof status.expirationTimestamp === 'string' ? Date.parse(status.expirationTimestamp) : NaN;
    if (typeof status.token !== 'string' || status.token === '' || !Number.isFinite(expiresAt)) throw new Error('the API server answered a TokenRequest without a token or expiration');
    return { token: status.token, expiresAt, expirationSeconds: typeof granted === 'number' && granted > 0 ? granted : spec.expirationSeconds };
  }
}

export interface TokenManagerOptions {
  requester: TokenRequester;
  /** Epoch ms. */
  now: () => number;
  /** In [0, 1); default Math.random. */
  random?: () => number;
}

/** Hands out pod-bound service account tokens (see the file comment). */
export class TokenManager {
  private readonly cache = new Map<string, IssuedToken>();
  private readonly random: () => number;

  constructor(private readonly o: TokenManagerOptions) {
    this.random = o.random ?? Math.random;
  }

  /** A valid token for the request: the cached one unless due for refresh. Rejects when none can be had. */
  async get(namespace: string, serviceAccount: string, spec: TokenSpec, signal?: AbortSignal): Promise<string> {
    this.dropExpired();
    const key = JSON.stringify([spec.pod.uid, namespace, serviceAccount, [...spec.audiences].sort(), spec.expirationSeconds]);
    const cached = this.cache.get(key);
    if (cached && !this.requiresRefresh(cached)) return cached.token;
    try {
      const fresh = await this.o.requester.request(namespace, serviceAccount, spec, signal);
      this.cache.set(key, fresh);
      return fresh.token;
    } catch (e) {
      if (cached && this.o.now() < cached.expiresAt) return cached.token;
      throw e;
    }
  }

  /** Upstream requiresRefresh: older than 24 h, or less than 20% of the lifetime left (each less a jitter). */
  requiresRefresh(t: IssuedToken): boolean {
    const now = this.o.now();
    const lifetimeMs = t.expirationSeconds * 1000;
    const issuedAt = t.expiresAt - lifetimeMs;
    const jitter = Math.floor(this.random() * (MAX_JITTER_MS / 1000)) * 1000;
    if (now > issuedAt + MAX_TTL_MS - jitter) return true;
    return now > t.expiresAt - Math.floor((t.expirationSeconds * 20) / 100) * 1000 - jitter;
  }

  /** Forgets the pod's tokens (the pod is gone; the server revokes them with it). */
  forgetPod(uid: string): void {
    const prefix = JSON.stringify([uid]).slice(0, -1) + ',';
    for (const k of this.cache.keys()) if (k.startsWith(prefix)) this.cache.delete(k);
  }

  /** Number of cached tokens (for tests and metrics). */
  get size(): number {
    return this.cache.size;
  }

  private dropExpired(): void {
    const now = this.o.now();
    for (const [k, t] of this.cache) if (t.expiresAt <= now) this.cache.delete(k);
  }
}
