import type { IncomingMessage } from 'node:http';
import { ApiError, errors } from '../api/errors';
import type { Attributes } from '../authz/authorizer';
import { forbiddenMessage } from '../authz/chain';
import type { RequestInfo } from '../server/request-info';
import { serviceAccountGroups, splitServiceAccountUsername } from '../authn/service-account-token';
import type { UserInfo } from '../api/user';

/** Whether the caller may do what the attributes describe (the impersonate verb here); never throws for a decision. */
export type ImpersonationAuthorize = (a: Attributes) => Promise<boolean>;

const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS = 'system:anonymous';

interface Check {
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name: string;
}

/** True when the request carries any Impersonate-* header. */
export function wantsImpersonation(req: IncomingMessage): boolean {
  for (const h of Object.keys(req.headers)) if (h.startsWith('impersonate-')) return true;
  return false;
}

/**
 * Impersonation (5.7), as upstream's WithImpersonation filter: after authenticating the caller and
 * before authorizing the request, read Impersonate-User / -Group / -Extra-<key> / -Uid, check the
 * caller holds the impersonate verb on each requested value (users or serviceaccounts in the core
 * group, groups, userextras/<key> and uids in authentication.svc.io, the value as resource name so
 * resourceNames can restrict it), and return the user to act as. Without Impersonate-* headers the
 * caller is returned unchanged. 400 for headers without Impersonate-User, 403 when not allowed.
 */
/** The authenticated caller of each request that impersonates someone (the audit event's user; its impersonatedUser is the result). */
export const impersonators = new WeakMap<IncomingMessage, UserInfo>();

export async function impersonate(req: IncomingMessage, caller: UserInfo, authorize: ImpersonationAuthorize): Promise<UserInfo> {
  if (!wantsImpersonation(req)) return caller;
  impersonators.set(req, caller);
  const h = req.headersDistinct;
  const username = (h['impersonate-user'] ?? []).find((v) => v !== '');
  const groups = (h['impersonate-group'] ?? []).filter((v) => v !== '');
  const uid = (h['impersonate-uid'] ?? []).find((v) => v !== '');
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(h)) {
    if (!name.startsWith(EXTRA_PREFIX) || !values) continue;
    const key = unescapeKey(name.slice(EXTRA_PREFIX.length));
    if (key === '') continue;
    (extra[key] ??= []).push(...values);
  }
  if (username === undefined) {
    if (groups.length > 0 || uid !== undefined || Object.keys(extra).length > 0) {
      throw errors.badRequest('requested impersonation of groups, extra or uid without impersonating a user: set Impersonate-User');
    }
    return caller;
  }

  const checks: Check[] = [];
  const sa = splitServiceAccountUsername(username);
  if (sa) checks.push({ apiGroup: '', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name });
  else checks.push({ apiGroup: '', resource: 'users', name: username });
  for (const g of groups) checks.push({ apiGroup: '', resource: 'groups', name: g });
  for (const [key, values] of Object.entries(extra)) for (const v of values) checks.push({ apiGroup: 'authentication.svc.io', resource: 'userextras', subresource: key, name: v });
  if (uid !== undefined) checks.push({ apiGroup: 'authentication.svc.io', resource: 'uids', name: uid });

  const path = (req.url ?? '/').split('?')[0];
  for (const c of checks) {
    const info: RequestInfo = {
      isResourceRequest: true,
      path,
      verb: 'impersonate',
      apiPrefix: c.apiGroup ? 'apis' : 'api',
      apiGroup: c.apiGroup,
      apiVersion: '',
      namespace: c.namespace ?? '',
      resource: c.resource,
      subresource: c.subresource ?? '',
      name: c.name,
    };
    let allowed: boolean;
    try {
      allowed = await authorize({ user: caller, info });
    } catch (err) {
      if (err instanceof ApiError && err.code === 403) allowed = false;
      else throw err;
    }
    if (!allowed) throw errors.forbidden(forbiddenMessage({ user: caller, info }, ''));
  }

  // As upstream: a service account's groups are implied when no groups are given; everyone but
  // anonymous is authenticated unless system:unauthenticated was asked for.
  let out = sa && groups.length === 0 ? serviceAccountGroups(sa.namespace) : [...groups];
  if (username !== ANONYMOUS) {
    if (!out.includes(AUTHENTICATED) && !out.includes(UNAUTHENTICATED)) out = [...out, AUTHENTICATED];
  } else if (!out.includes(UNAUTHENTICATED)) out = [...out, UNAUTHENTICATED];
  return { username, ...(uid !== undefined ? { uid } : {}), groups: out, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
}

/**
 * The request filter the router calls: authenticates the caller, then impersonation (5.7) sits
 * between authentication and authorization as upstream's filter chain orders them: the
 * impersonate verb is checked for the caller, and the request is then authorized as the user
 * returned.
 */
export function authenticateWithImpersonation(
  authn: { authenticate(req: IncomingMessage): Promise<UserInfo> },
  authorize: ImpersonationAuthorize,
): (req: IncomingMessage) => Promise<UserInfo> {
  return async (req) => impersonate(req, await authn.authenticate(req), authorize);
}

/** Header names arrive lower-cased; non-token characters of the key are percent-encoded (5.7). */
function unescapeKey(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
