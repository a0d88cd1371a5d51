import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { UserInfo } from '../api/user';
import { MetricsRegistry } from '../authn/metrics';
import type { ApiServerFlags } from '../config/flags';
import { authenticateWithImpersonation } from '../filters/impersonation';
import type { ApiMetrics } from '../metrics/registry';
import { authenticationTypes } from '../registry/types/authentication-types';
import { buildAuthentication, type Authentication } from './authentication';
import { authenticationOptions } from './authn-options';
import type { StorageLayer } from './storage';
import type { StoreLayer } from './store';
import type { ServingTls } from './tls';

/** The authentication phase's result: every method of section 5, and the request filter the router calls. */
export interface AuthnLayer {
  auth: Authentication;
  /** Authenticates the caller, then applies impersonation (5.7): the user the request acts as. A function value, free to pass on. */
  authenticate: (req: IncomingMessage) => Promise<UserInfo>;
}

/**
 * Registers the authentication review types, builds the authentication methods the flags
 * configure (their metrics served on /metrics) and puts impersonation after them. Throws
 * AuthenticationConfigError for an unreadable file or an invalid configuration.
 */
export function buildAuthn(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, tls: ServingTls, apiMetrics: ApiMetrics, log: Logger): AuthnLayer {
  for (const t of authenticationTypes) s.registry.register(t);
  const metrics = new MetricsRegistry();
  apiMetrics.include(() => metrics.render());
  const auth = buildAuthentication(authenticationOptions(flags, tls.clientCaPem), {
    store: core.store,
    cache: s.cache,
    registry: s.registry,
    metrics,
    log: log.child({ component: 'authn' }),
    now: () => new Date(),
    admit: (a) => core.admission.admit(a),
    informers: core.informers,
  });
  if (auth.generatedSigningKeyPath) log.info({ path: auth.generatedSigningKeyPath }, 'generated the service account signing key');
  const chain = core.authz.chain;
  return { auth, authenticate: authenticateWithImpersonation(auth.request, (a) => chain.authorize(a).then(() => true, () => false)) };
}
