import type { Attributes, Authorizer } from '../../../apiserver/authz/authorizer';

/** Test authorizer: allow every authenticated user, with anonymous callers limited to health and version (the public-info-viewer paths). */
export class AuthenticatedAllow implements Authorizer {
  readonly name = 'AlwaysAllow';
  private static readonly PUBLIC = /^\/(livez|readyz|healthz|version)(\/.*)?$/;

  async authorize(a: Attributes) {
    if (a.user.groups.includes('system:authenticated')) return { decision: 'allow' as const };
    if (!a.info.isResourceRequest && a.info.verb === 'get' && AuthenticatedAllow.PUBLIC.test(a.info.path)) return { decision: 'allow' as const };
    return { decision: 'no-opinion' as const };
  }
}
