/**
 * Authorization of requests to the agent's server: AlwaysAllow, or SubjectAccessReview against
 * the API server (upstream's kubelet authorization mode Webhook) with a decision cache that keeps
 * "allowed" for cacheAuthorizedTTL and "denied" for cacheUnauthorizedTTL. Members of
 * system:masters are allowed without a review: the API server would allow them anyway, and its own
 * kubelet-client certificate (O system:masters) must reach the agent even when the API server
 * cannot be asked (the logs proxy kept working before this server existed).
 */
import type { ApiClient } from '../client/api-client';
import type { ResourceRef } from '../client/resources';
import type { KObject } from '../../apiserver/api/types';
import type { NodeRequestAttributes } from './request-attributes';
import { TtlCache } from '../../common/ttl-cache';
import { MASTERS_GROUP, type UserInfo } from './user-info';

export const subjectAccessReviewsResource: ResourceRef = {
  group: 'authorization.svc.io',
  version: 'v1',
  resource: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

export interface Decision {
  allowed: boolean;
  /** The reviewer's reason, when it gave one. */
  reason: string;
}

/** Decides whether a user may make a request. */
export interface Authorizer {
  /** The decision for user and attributes. Rejects when the decision cannot be obtained (answered 500). */
  authorize(user: UserInfo, a: NodeRequestAttributes, signal?: AbortSignal): Promise<Decision>;
}

export const alwaysAllow: Authorizer = {
  authorize: () => Promise.resolve({ allowed: true, reason: 'AlwaysAllow' }),
};

/** Reads status.allowed/reason/denied of a SubjectAccessReview answer. */
export function decisionFromReview(obj: KObject): Decision {
  const status = (obj as { status?: unknown }).status;
  if (!status || typeof status !== 'object') return { allowed: false, reason: '' };
  const s = status as { allowed?: unknown; denied?: unknown; reason?: unknown };
  return { allowed: s.allowed === true && s.denied !== true, reason: typeof s.reason === 'string' ? s.reason : '' };
}

/** Asks the API server with a SubjectAccessReview (group "", version v1, resource nodes). */
export class SubjectAccessReviewAuthorizer implements Authorizer {
  constructor(private readonly client: Pick<ApiClient, 'create'>) {}

  async authorize(user: UserInfo, a: NodeRequestAttributes, signal?: AbortSignal): Promise<Decision> {
    const body = {
      apiVersion: 'authorization.svc.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: user.groups,
        ...(user.extra ? { extra: user.extra } : {}),
        resourceAttributes: { verb: a.verb, group: '', version: 'v1', resource: 'nodes', subresource: a.subresource, name: a.name },
      },
    } as unknown as KObject;
    return decisionFromReview(await this.client.create(subjectAccessReviewsResource, body, signal ? { signal } : {}));
  }
}

function cacheKey(user: UserInfo, a: NodeRequestAttributes): string {
  const extra = user.extra ? Object.entries(user.extra).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)) : [];
  return JSON.stringify([user.username, user.uid ?? '', [...user.groups].sort(), extra, a.verb, a.subresource, a.name]);
}

export interface CachedAuthorizerOptions {
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  now: () => number;
}

/** Caches another authorizer's decisions per user and attributes; errors are not cached. */
export class CachedAuthorizer implements Authorizer {
  private readonly cache: TtlCache<Decision>;

  constructor(
    private readonly inner: Authorizer,
    private readonly o: CachedAuthorizerOptions,
  ) {
    this.cache = new TtlCache(o.now);
  }

  async authorize(user: UserInfo, a: NodeRequestAttributes, signal?: AbortSignal): Promise<Decision> {
    const key = cacheKey(user, a);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const d = await this.inner.authorize(user, a, signal);
    this.cache.set(key, d, d.allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs);
    return d;
  }
}

/** Allows system:masters outright and defers everyone else to inner. */
export class MastersBypass implements Authorizer {
  constructor(private readonly inner: Authorizer) {}

  async authorize(user: UserInfo, a: NodeRequestAttributes, signal?: AbortSignal): Promise<Decision> {
    if (user.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: `${MASTERS_GROUP} member` };
    return this.inner.authorize(user, a, signal);
  }
}
