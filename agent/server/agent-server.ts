/**
 * Builds and starts the agent's HTTPS server from the configuration: serving certificate,
 * client CA (authentication.x509.clientCAFile, else the kubeconfig's CA so the API server's
 * kubelet-client certificate is accepted), token reviews (authentication.webhook, cached for
 * cacheTTL), anonymous access, authorization (AlwaysAllow or cached SubjectAccessReviews with
 * system:masters allowed outright), and the routes: /containerLogs/ and /checkpoint/.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentConfig } from '../config/load';
import type { ApiClient } from '../client/api-client';
import type { RuntimeService } from '../cri/runtime-service';
import { containerLogHandler, CONTAINER_LOGS_PREFIX, type LogLocator } from '../logs/container-log-handler';
import { ensureServingCert } from '../logs/serving-cert';
import type { Clock } from '../node/clock';
import type { Log } from '../platform/logger';
import { CheckpointHandler } from '../checkpoint/checkpoint-handler';
import { CHECKPOINT_PREFIX } from '../checkpoint/checkpoint-request';
import { locatorFromLogs } from '../checkpoint/container-locator';
import { RequestAuthenticator } from './authenticator';
import { alwaysAllow, CachedAuthorizer, MastersBypass, SubjectAccessReviewAuthorizer, type Authorizer } from './authorizer';
import { NodeServer, type Route } from './node-server';
import { ApiTokenReviewer, CachedTokenReviewer } from './token-reviewer';

export interface AgentServerDeps {
  cfg: AgentConfig;
  /** CA of the agent's kubeconfig (default client CA). */
  kubeconfigCaPem: string | undefined;
  client: Pick<ApiClient, 'create'>;
  runtime: Pick<RuntimeService, 'checkpointContainer'>;
  /** The pod manager. */
  pods: LogLocator;
  clock: Clock;
  /** The node's IPs, for the generated serving certificate. */
  ips: string[];
  log: Log;
}

/** Builds the server (routes, authn, authz) without listening; the parts are exposed for tests. */
export function buildAgentServer(d: AgentServerDeps, x509: boolean): NodeServer {
  const c = d.cfg.config;
  const now = () => d.clock.now();
  const tokens = c.authentication.webhook.enabled
    ? new CachedTokenReviewer(new ApiTokenReviewer(d.client), c.authentication.webhook.cacheTTL, now)
    : undefined;
  const authenticator = new RequestAuthenticator({ x509, anonymous: c.authentication.anonymous.enabled, ...(tokens ? { tokens } : {}) });
  const authorizer: Authorizer =
    c.authorization.mode === 'AlwaysAllow'
      ? alwaysAllow
      : new MastersBypass(
          new CachedAuthorizer(new SubjectAccessReviewAuthorizer(d.client), {
            authorizedTtlMs: c.authorization.webhook.cacheAuthorizedTTL,
            unauthorizedTtlMs: c.authorization.webhook.cacheUnauthorizedTTL,
            now,
          }),
        );
  const checkpoint = new CheckpointHandler({
    enabled: () => d.cfg.featureGates.enabled('ContainerCheckpoint'),
    locator: locatorFromLogs(d.pods),
    runtime: d.runtime,
    rootDir: d.cfg.flags.rootDir,
    now,
    log: d.log,
  });
  const routes: Route[] = [
    { prefix: CONTAINER_LOGS_PREFIX, handler: containerLogHandler({ locator: d.pods, clock: d.clock }) },
    { prefix: CHECKPOINT_PREFIX, handler: checkpoint.handle },
  ];
  return new NodeServer({ nodeName: d.cfg.nodeName, authenticator, authorizer, routes, log: d.log });
}

/**
 * Starts the server on address:port; resolves it and the bound port, or undefined (logged) when it
 * cannot start, because pods still run without it.
 */
export async function startAgentServer(d: AgentServerDeps): Promise<{ server: NodeServer; port: number } | undefined> {
  const c = d.cfg.config;
  try {
    const clientCaPem = c.authentication.x509.clientCAFile ? await readFile(c.authentication.x509.clientCAFile, 'utf8') : d.kubeconfigCaPem;
    if (!clientCaPem) d.log.warn({}, 'no client CA (authentication.x509.clientCAFile or the kubeconfig CA): client certificates are not accepted');
    const cert = await ensureServingCert({
      certDir: d.cfg.flags.certDir || path.join(d.cfg.flags.rootDir, 'pki'),
      nodeName: d.cfg.nodeName,
      ips: d.ips,
      ...(c.tlsCertFile && c.tlsPrivateKeyFile ? { certFile: c.tlsCertFile, keyFile: c.tlsPrivateKeyFile } : {}),
    });
    const server = buildAgentServer(d, clientCaPem !== undefined && clientCaPem !== '');
    const port = await server.start({
      address: c.address,
      port: c.port,
      certPem: cert.certPem,
      keyPem: cert.keyPem,
      ...(clientCaPem ? { clientCaPem } : {}),
      minVersion: c.tlsMinVersion === 'VersionTLS13' ? 'TLSv1.3' : 'TLSv1.2',
    });
    d.log.info({ address: c.address, port, cert: cert.certFile, generated: cert.generated, authorization: c.authorization.mode }, 'serving the agent API');
    return { server, port };
  } catch (e) {
    d.log.error({ address: c.address, port: c.port, error: (e as Error).message }, 'cannot serve the agent API');
    return undefined;
  }
}
