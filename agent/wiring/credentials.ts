/**
 * Start-up phase 5: the client identity. A kubeconfig with a usable certificate, else the cert
 * store, else TLS bootstrap with a CSR; then the API clients (one paced by kubeAPIQPS/Burst, one
 * for heartbeats) and, with rotateCertificates, the certificate rotation loop.
 */
import { svcVersion } from '../../common/version';
import { CertificateRotator } from '../bootstrap/cert-rotation';
import { CertStore } from '../bootstrap/cert-store';
import { loadOrBootstrapIdentity, type ClientIdentity } from '../bootstrap/tls-bootstrap';
import { HttpApiClient } from '../client/http-api-client';
import { TokenBucketLimiter } from '../client/request-limiter';
import type { RestConfig } from '../client/rest-config';
import type { MachineInfo } from '../platform/machine';
import { requestTimeoutMs, type AgentContext } from './context';

export interface Credentials {
  identity: ClientIdentity;
  /** Every request but the heartbeats, paced by kubeAPIQPS / kubeAPIBurst. */
  client: HttpApiClient;
  /** The Lease and node status, never paced. */
  heartbeatClient: HttpApiClient;
  /** Event writes, paced by eventRecordQPS / eventBurst (unpaced at 0), as the kubelet's eventClient. */
  eventClient: HttpApiClient;
}

export async function bootstrapCredentials(ctx: AgentContext, machine: MachineInfo): Promise<Credentials> {
  const { cfg, log, notifier, signal, clock, running } = ctx;
  const c = cfg.config;
  const nodeName = cfg.nodeName;
  notifier.status('bootstrapping client certificate');
  const store = new CertStore(cfg.flags.certDir);
  const userAgent = `svc-node/${svcVersion()} (linux/${machine.architecture})`;
  // kubeAPIQPS / kubeAPIBurst pace every client but the heartbeat one, as the kubelet's
  // heartbeatClient (QPS -1): a busy pod sync must never delay a Lease renewal.
  const limiter = new TokenBucketLimiter(c.kubeAPIQPS, c.kubeAPIBurst);
  const makeClient = (rc: RestConfig) => new HttpApiClient(rc, { timeoutMs: requestTimeoutMs, userAgent, limiter });
  const identity = await loadOrBootstrapIdentity(
    {
      kubeconfigPath: cfg.flags.kubeconfig,
      bootstrapKubeconfigPath: cfg.flags.bootstrapKubeconfig,
      store,
      nodeName,
      clock,
      log: log.child({ component: 'bootstrap' }),
      makeClient,
    },
    signal,
  );
  log.info({ origin: identity.origin, server: identity.config.server }, 'client identity ready');
  const client = makeClient(identity.config);
  const heartbeatClient = new HttpApiClient(identity.config, { timeoutMs: requestTimeoutMs, userAgent });
  // Upstream's kubelet writes events on a client of their own with eventRecordQPS / eventBurst, so
  // a burst of pod events never delays a status write; 0 means no limit there too.
  const eventLimiter = c.eventRecordQPS > 0 ? new TokenBucketLimiter(c.eventRecordQPS, c.eventBurst) : undefined;
  const eventClient = new HttpApiClient(identity.config, { timeoutMs: requestTimeoutMs, userAgent, ...(eventLimiter ? { limiter: eventLimiter } : {}) });
  running.clients.push(client, heartbeatClient, eventClient);

  if (c.rotateCertificates && identity.config.certFile === store.currentPath) {
    const rotator = new CertificateRotator({
      store,
      client,
      clock,
      log: log.child({ component: 'cert-rotation' }),
      nodeName,
      bootstrapKubeconfigPath: cfg.flags.bootstrapKubeconfig,
      makeClient,
      alsoSwap: [heartbeatClient, eventClient],
    });
    running.loops.push(rotator.run(signal));
  }
  return { identity, client, heartbeatClient, eventClient };
}
