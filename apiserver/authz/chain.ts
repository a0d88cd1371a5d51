import { errors } from '../api/errors';
import type { Attributes, Authorizer } from './authorizer';

/**
 * Authorizers in configured order (A.1): the first allow or deny ends evaluation; if none has an
 * opinion the request is denied with 403. system:masters bypasses everything (A.2).
 */
export class AuthorizerChain {
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  /** Resolves when allowed; rejects with a 403 ApiError otherwise. */
  async authorize(a: Attributes): Promise<void> {
    if (a.user.groups.includes('system:masters')) return;
    let reason = '';
    for (const z of this.authorizers) {
      const d = await z.authorize(a);
      if (d.decision === 'allow') return;
      if (d.decision === 'deny') {
        reason = d.reason ?? '';
        break;
      }
      if (d.reason) reason = d.reason;
    }
    throw errors.forbidden(forbiddenMessage(a, reason));
  }
}

/** Upstream's wording: `User "x" cannot list resource "pods" in API group "" in the namespace "y"`. */
export function forbiddenMessage(a: Attributes, reason: string): string {
  const i = a.info;
  const suffix = reason ? `: ${reason}` : '';
  if (!i.isResourceRequest) return `forbidden: User "${a.user.username}" cannot ${i.verb} path "${i.path}"${suffix}`;
  const res = i.subresource ? `${i.resource}/${i.subresource}` : i.resource;
  const where = i.namespace ? ` in the namespace "${i.namespace}"` : ' at the cluster scope';
  const name = i.name ? ` "${i.name}"` : '';
  return `${res}${name} is forbidden: User "${a.user.username}" cannot ${i.verb} resource "${res}" in API group "${i.apiGroup}"${where}${suffix}`;
}
