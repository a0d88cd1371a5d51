/**
 * Bearer-token authentication by TokenReview against the API server (upstream's kubelet
 * authentication.webhook), with a decision cache: both "authenticated" and "not authenticated"
 * answers are kept for cacheTTL, as upstream's token cache does with the kubelet's single TTL.
 * Failed calls (API server unreachable) are not cached.
 */
import { createHash } from 'node:crypto';
import type { ApiClient } from '../client/api-client';
import type { ResourceRef } from '../client/resources';
import type { KObject } from '../../apiserver/api/types';
import { TtlCache } from '../../common/ttl-cache';
import type { UserInfo } from './user-info';

export const tokenReviewsResource: ResourceRef = {
  group: 'authentication.svc.io',
  version: 'v1',
  resource: 'tokenreviews',
  kind: 'TokenReview',
  namespaced: false,
};

/** Checks bearer tokens. */
export interface TokenReviewer {
  /** The user the token belongs to, or undefined when the token is not valid. Rejects when the reviewer cannot be reached. */
  review(token: string, signal?: AbortSignal): Promise<UserInfo | undefined>;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Reads status.user of a TokenReview answer; undefined unless authenticated with a username. */
export function userFromTokenReview(obj: KObject): UserInfo | undefined {
  const status = (obj as { status?: unknown }).status;
  if (!status || typeof status !== 'object') return undefined;
  const s = status as { authenticated?: unknown; user?: unknown };
  if (s.authenticated !== true || !s.user || typeof s.user !== 'object') return undefined;
  const u = s.user as { username?: unknown; uid?: unknown; groups?: unknown; extra?: unknown };
  if (typeof u.username !== 'string' || u.username === '') return undefined;
  const extra: Record<string, string[]> = {};
  if (u.extra && typeof u.extra === 'object') for (const [k, v] of Object.entries(u.extra)) extra[k] = strings(v);
  return {
    username: u.username,
    ...(typeof u.uid === 'string' && u.uid ? { uid: u.uid } : {}),
    groups: strings(u.groups),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}

/** Creates a TokenReview with the agent's own client (the node authorizer lets system:node:<name> do so, A.7). */
export class ApiTokenReviewer implements TokenReviewer {
  constructor(private readonly client: Pick<ApiClient, 'create'>) {}

  async review(token: string, signal?: AbortSignal): Promise<UserInfo | undefined> {
    const body = { apiVersion: 'authentication.svc.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } } as unknown as KObject;
    const answer = await this.client.create(tokenReviewsResource, body, signal ? { signal } : {});
    return userFromTokenReview(answer);
  }
}

/** Caches another reviewer's answers by a hash of the token (the token itself is never kept). */
export class CachedTokenReviewer implements TokenReviewer {
  private readonly cache: TtlCache<{ user: UserInfo | undefined }>;

  constructor(
    private readonly inner: TokenReviewer,
    private readonly ttlMs: number,
    now: () => number,
  ) {
    this.cache = new TtlCache(now);
  }

  async review(token: string, signal?: AbortSignal): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.cache.get(key);
    if (hit) return hit.user;
    const user = await this.inner.review(token, signal);
    this.cache.set(key, { user }, this.ttlMs);
    return user;
  }
}
