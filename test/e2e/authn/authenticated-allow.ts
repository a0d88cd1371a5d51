import type { Attributes, Authorizer } from '../../../apiserver/authz/authorizer';

/** Test authorizer: allow every authenticated user, with anonymous callers limited to health and version (the public-info-viewer paths). */
export class AuthenticatedAllow implements Authorizer {
  readonly name = 'AlwaysAllow';
  private static readonly PUBLIC = /^\/(livez|readyz|healthz|version)(\/.*)?$/;

  authorize(a: Attributes): ReturnType<Authorizer['authorize']> {
    if (a.user.groups.includes('system:authenticated')) return Promise.resolve({ decision: 'allow' });
    if (!a.info.isResourceRequest && a.info.verb === 'get' && AuthenticatedAllow.PUBLIC.test(a.info.path)) return Promise.resolve({ decision: 'allow' });
    return Promise.resolve({ decision: 'no-opinion' });
  }
}
