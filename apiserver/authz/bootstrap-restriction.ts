import { BOOTSTRAPPERS_GROUP } from '../authn/bootstrap-token';
import type { Attributes, Authorizer, Decision } from './authorizer';

/** Non-resource paths a bootstrapper may GET: discovery, version, health (A.4's list, upstream system:discovery and system:public-info-viewer). */
const PUBLIC_PATHS = /^\/(api|apis|version|healthz|livez|readyz|openapi\/v2|openapi\/v3)(\/.*)?$/;
const CSR_VERBS = new Set(['create', 'get', 'list', 'watch']);

/**
 * An interim authorizer until RBAC lands: a caller in system:bootstrappers (a bootstrap token,
 * spec 5.1) is denied everything except what upstream's system:node-bootstrapper and discovery
 * roles give it — create, get, list and watch of certificatesigningrequests (not their
 * sub-resources), create of selfsubjectreviews, and GET of discovery, version and health paths.
 * For those it has no opinion, so the next authorizer decides; for everyone else too.
 * Place it first in the chain.
 */
export class BootstrapRestriction implements Authorizer {
  readonly name = 'BootstrapRestriction';

  /** Deny for a bootstrapper outside its allowance; no opinion otherwise. */
  async authorize(a: Attributes): Promise<{ decision: Decision; reason?: string }> {
    if (!a.user.groups.includes(BOOTSTRAPPERS_GROUP)) return { decision: 'no-opinion' };
    if (allowedForBootstrapper(a)) return { decision: 'no-opinion' };
    return { decision: 'deny', reason: 'bootstrap tokens may only request node client certificates' };
  }
}

function allowedForBootstrapper(a: Attributes): boolean {
  const i = a.info;
  if (!i.isResourceRequest) return (i.verb === 'get' || i.verb === 'head') && PUBLIC_PATHS.test(i.path);
  if (i.apiGroup === 'certificates.svc.io' && i.resource === 'certificatesigningrequests' && i.subresource === '') return CSR_VERBS.has(i.verb);
  if (i.apiGroup === 'authentication.svc.io' && i.resource === 'selfsubjectreviews' && i.subresource === '') return i.verb === 'create';
  return false;
}
