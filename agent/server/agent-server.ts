/**
 * Builds and starts the agent's HTTPS server from the configuration: serving certificate (rotated
 * or reloaded by ServingCertRotator), client CA (authentication.x509.clientCAFile, else the
 * kubeconfig's CA so the API server's kubelet-client certificate is accepted), token reviews
 * (authentication.webhook, cached for cacheTTL), anonymous access, authorization (AlwaysAllow or
 * cached SubjectAccessReviews with system:masters allowed outright), and the routes:
 * /containerLogs/, /checkpoint/, /healthz, /livez, /readyz, /metrics, /pods, /configz, the
 * streaming endpoints /exec/, /attach/, /portForward/ (upgrades) and /run/ (./stream-handler.ts),
 * and with a summary source /stats/summary and /metrics/resource.
 */
import { readFile } from 'node:fs/promises';
import type { EventRecorder } from '../../common/events/recorder';
import type { Pod } from '../api/core-v1';
import path from 'node:path';
import type { AgentConfig } from '../config/load';
import type { ApiClient } from '../client/api-client';
import type { RuntimeService } from '../cri';
import { containerLogHandler, CONTAINER_LOGS_PREFIX, type LogLocator } from '../logs/container-log-handler';
import { ensureServingCert } from './serving-cert';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { CheckpointHandler } from '../checkpoint/checkpoint-handler';
import { CHECKPOINT_PREFIX } from '../checkpoint/checkpoint-request';
import { runningContainers } from '../checkpoint/container-locator';
import type { AgentMetrics } from '../metrics/agent-metrics';
import { containerRef } from '../pod/pod-events';
import { RequestAuthenticator } from './authenticator';
import { HEALTH_PATHS, healthHandler, type HealthCheck } from './health-handler';
import { metricsHandler } from './metrics-handler';
import { podsHandler, type PodLister } from './pods-handler';
import { configzHandler } from './configz-handler';
import { resourceMetricsHandler, summaryHandler, type SummarySource } from './stats-handler';
import { ServingCertRotator } from './serving-cert-rotator';
import { alwaysAllow, CachedAuthorizer, MastersBypass, SubjectAccessReviewAuthorizer, type Authorizer } from './authorizer';
import { NodeServer, type Route } from './node-server';
import { ApiTokenReviewer, CachedTokenReviewer } from './token-reviewer';
import { StreamHandler } from './stream-handler';
import { StreamTracker } from './stream-tracker';

export interface AgentServerDeps {
  cfg: AgentConfig;
  /** CA of the agent's kubeconfig (default client CA). */
  kubeconfigCaPem: string | undefined;
  client: Pick<ApiClient, 'create'>;
  runtime: Pick<RuntimeService, 'checkpointContainer' | 'exec' | 'attach' | 'portForward' | 'localStream' | 'listPodSandbox' | 'listContainers' | 'execSync'>;
  /** The pod manager. */
  pods: LogLocator & PodLister & { podByName(namespace: string, name: string): Pod | undefined };
  /** Checks of /healthz and /livez, and the extra ones of /readyz. */
  health: { live: HealthCheck[]; ready: HealthCheck[] };
  /** Served at /metrics and told about requests and checkpoints. */
  metrics: AgentMetrics;
  clock: Clock;
  /** The node's IPs, for the generated serving certificate. */
  ips: string[];
  log: Log;
  /** Where the checkpoint events go, and the pod they are about; default none. */
  events?: { recorder: EventRecorder; podByName(namespace: string, name: string): Pod | undefined };
  /** The node's and pods' usage for /stats/summary and /metrics/resource; absent: those paths are 404. */
  stats?: SummarySource;
}

/** Builds the server (routes, authn, authz) without listening; the parts are exposed for tests. */
export function buildAgentServer(d: AgentServerDeps, x509: boolean): { server: NodeServer; checkpoints: CheckpointHandler; streams: StreamTracker } {
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
  const containers = runningContainers({ runtime: d.runtime, pods: d.pods });
  const checkpoint = new CheckpointHandler({
    enabled: () => d.cfg.featureGates.enabled('ContainerCheckpoint'),
    locator: containers,
    runtime: d.runtime,
    rootDir: d.cfg.flags.rootDir,
    now,
    log: d.log,
    observer: d.metrics,
    onCheckpointed: (r, file) => {
      // svc's own event: upstream's kubelet records none for a checkpoint.
      const pod = d.events?.podByName(r.namespace, r.pod);
      if (pod) d.events!.recorder.event(containerRef(pod, r.container), 'Normal', 'Checkpointed', `Checkpointed container ${r.container} to ${file}`);
    },
  });
  const health = healthHandler(d.health);
  const streams = new StreamTracker(c.maxStreamingConnections);
  d.metrics.observeStreams(streams);
  const streaming = new StreamHandler({
    runtime: d.runtime,
    containers,
    pods: d.pods,
    tracker: streams,
    idleTimeoutMs: c.streamingConnectionIdleTimeout,
    log: d.log,
  });
  // Container logs and health answer their errors in plain text, as upstream's kubelet does.
  const routes: Route[] = [
    { prefix: CONTAINER_LOGS_PREFIX, handler: containerLogHandler({ locator: d.pods, clock: d.clock }), errors: 'text' },
    { prefix: CHECKPOINT_PREFIX, handler: checkpoint.handle },
    ...HEALTH_PATHS.flatMap((p): Route[] => [
      { prefix: p, handler: health, errors: 'text' },
      { prefix: p + '/', handler: health, errors: 'text' },
    ]),
    { prefix: '/metrics', handler: metricsHandler(d.metrics) },
    { prefix: '/pods', handler: podsHandler(d.pods) },
    { prefix: '/pods/', handler: podsHandler(d.pods) },
    { prefix: '/configz', handler: configzHandler(c) },
    ...(d.stats
      ? [
          { prefix: '/stats/', handler: summaryHandler(d.stats) },
          { prefix: '/metrics/resource', handler: resourceMetricsHandler(d.stats, d.log) },
        ]
      : []),
    ...['/exec/', '/attach/', '/portForward/', '/run/'].map((prefix): Route => ({ prefix, handler: streaming.handle, upgrade: streaming.upgrade })),
  ];
  return { server: new NodeServer({ nodeName: d.cfg.nodeName, authenticator, authorizer, routes, log: d.log, observer: d.metrics }), checkpoints: checkpoint, streams };
}

export interface StartedAgentServer {
  server: NodeServer;
  port: number;
  /** Shares the archives being written with the retention policy. */
  checkpoints: CheckpointHandler;
  /** Rotates (generated) or reloads (configured files) the serving certificate; run it with the server. */
  rotator: ServingCertRotator;
}

/**
 * Starts the server on address:port; resolves it and the bound port, or undefined (logged) when it
 * cannot start, because pods still run without it.
 */
export async function startAgentServer(d: AgentServerDeps): Promise<StartedAgentServer | undefined> {
  const c = d.cfg.config;
  try {
    // Without clientCAFile the cluster CA of the agent's kubeconfig verifies client certificates:
    // it signs the API server's kubelet-client certificate (pods/log, nodes/proxy), as kubeadm
    // sets the kubelet's clientCAFile to the cluster CA. A node that joined with a plain
    // kubeconfig or a bootstrap token thus serves `kubectl logs` with nothing set by hand.
    const clientCaPem = c.authentication.x509.clientCAFile ? await readFile(c.authentication.x509.clientCAFile, 'utf8') : d.kubeconfigCaPem;
    if (!clientCaPem) d.log.warn({}, 'no client CA (authentication.x509.clientCAFile or the kubeconfig CA): client certificates are not accepted');
    const certOptions = {
      certDir: d.cfg.flags.certDir || path.join(d.cfg.flags.rootDir, 'pki'),
      nodeName: d.cfg.nodeName,
      ips: d.ips,
      ...(c.tlsCertFile && c.tlsPrivateKeyFile ? { certFile: c.tlsCertFile, keyFile: c.tlsPrivateKeyFile } : {}),
    };
    if (c.serverTLSBootstrap && !certOptions.certFile) {
      // Upstream requests a kubernetes.io/kubelet-serving certificate by CSR; svc-apiserver's signer has no serving signer.
      d.log.warn({}, 'serverTLSBootstrap is not supported (the API server signs no serving certificates): using a self-signed serving certificate, rotated at 80% of its life');
    }
    const cert = await ensureServingCert({ ...certOptions, now: new Date(d.clock.now()) });
    const { server, checkpoints } = buildAgentServer(d, clientCaPem !== undefined && clientCaPem !== '');
    const port = await server.start({
      address: c.address,
      port: c.port,
      certPem: cert.certPem,
      keyPem: cert.keyPem,
      ...(clientCaPem ? { clientCaPem } : {}),
      minVersion: c.tlsMinVersion === 'VersionTLS13' ? 'TLSv1.3' : 'TLSv1.2',
    });
    d.log.info({ address: c.address, port, cert: cert.certFile, generated: cert.generated, authorization: c.authorization.mode }, 'serving the agent API');
    const rotator = new ServingCertRotator({
      cert: certOptions,
      current: cert,
      clock: d.clock,
      log: d.log,
      apply: (next) => server.setCertificate(next.certPem, next.keyPem),
    });
    return { server, port, checkpoints, rotator };
  } catch (e) {
    d.log.error({ address: c.address, port: c.port, error: (e as Error).message }, 'cannot serve the agent API');
    return undefined;
  }
}
