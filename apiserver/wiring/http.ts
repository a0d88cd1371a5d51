import type { Logger } from 'pino';
import type { ApiServerFlags } from '../config/flags';
import { handleCsrApproval } from '../handlers/csr-approval';
import { nodeProxyHandler } from '../handlers/node-proxy';
import { handlePodBinding } from '../handlers/pod-binding';
import { handlePodEphemeralContainers } from '../handlers/pod-ephemeral-containers';
import { makePodEvictionHandler } from '../handlers/pod-eviction';
import { podConnectHandler } from '../handlers/pod-connect';
import { AgentSessions } from '../handlers/agent-sessions';
import { podLogHandler } from '../handlers/pod-log';
import { DecodedVersions } from '../handlers/decoded-versions';
import type { Auditor } from '../filters/audit/auditor';
import { podProxyHandler, serviceProxyHandler } from '../handlers/resource-proxy';
import type { ApiMetrics } from '../metrics/registry';
import { ApiServer, type ApiServerOptions } from './api-server';
import type { AuthnLayer } from './authn';
import { storageCheck, storeWriteCheck, type StorageLayer } from './storage';
import type { StoreLayer } from './store';
import type { ResourceMetricsLayer } from './resource-metrics';
import { kubeletClientTls, proxyClientIdentity, type ServingTls } from './tls';
import { informerServiceLookup } from './service-lookup';

/** The verbs upstream's discovery lists for the proxy sub-resources (from the methods they serve). */
const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'];
/** pods/exec, attach, portforward (create; get too during upstream's WebSocket transition) and pods/proxy, as upstream's discovery. */
const POD_CONNECT_DOCS = [
  { name: 'attach', group: '', version: 'v1', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  { name: 'exec', group: '', version: 'v1', kind: 'PodExecOptions', verbs: ['create', 'get'] },
  { name: 'portforward', group: '', version: 'v1', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
  { name: 'proxy', group: '', version: 'v1', kind: 'PodProxyOptions', verbs: PROXY_VERBS },
];

/** What the HTTP phase assembles: the earlier phases' results, the metrics, the log and the version /version reports. */
export interface HttpParts {
  storage: StorageLayer;
  core: StoreLayer;
  tls: ServingTls;
  authn: AuthnLayer;
  metrics: ApiMetrics;
  /** The audit pipeline (wiring/audit.ts), when auditing is on. */
  audit?: Auditor;
  log: Logger;
  version: ApiServerOptions['version'];
  /** The resource metrics API's handlers (wiring/resource-metrics.ts). */
  metricsApi?: Pick<ResourceMetricsLayer, 'virtual'>;
}

/**
 * The API server with every route: the generic handlers (inside ApiServer), the virtual review
 * resources of authentication and authorization, the sub-resources with their own handler, and
 * the health checks of the store (and, for readyz, of its writes), authorization and
 * authentication. Nothing listens yet.
 */
export function buildApiServer(flags: ApiServerFlags, p: HttpParts): ApiServer {
  const { registry, cache, storage } = p.storage;
  const { store, admission, authz } = p.core;
  const { auth } = p.authn;
  const kubelet = kubeletClientTls(flags, p.tls.pki);
  const versions = new DecodedVersions();
  const nodes = registry.lookup('', 'v1', 'nodes')!;
  const connect = { client: kubelet.client, nodes, ...(kubelet.caPem ? { caPem: kubelet.caPem } : {}), sessions: new AgentSessions(), versions };
  return new ApiServer({
    metrics: p.metrics,
    audit: p.audit,
    aggregator: {
      remote: p.core.remoteApis,
      lookup: informerServiceLookup(() => store, registry, () => p.core.informers),
      identity: proxyClientIdentity(flags),
    },
    host: flags.bindAddress,
    port: flags.securePort,
    tls: p.tls.serving,
    registry,
    store,
    cache,
    authn: { authenticate: p.authn.authenticate },
    authz: authz.chain,
    admission,
    serveK8sIoGroups: flags.serveK8sIoGroups,
    virtual: new Map([...authz.reviewHandlers, ...auth.virtual, ...(p.metricsApi?.virtual ?? [])]),
    subresources: new Map([
      ...auth.subresources,
      ['certificates.svc.io/certificatesigningrequests/approval', handleCsrApproval],
      ['/pods/binding', handlePodBinding], // core group '' → key '/pods/binding'
      ['/pods/ephemeralcontainers', handlePodEphemeralContainers],
      ['/pods/eviction', makePodEvictionHandler({ podDisruptionBudgets: registry.lookup('policy', 'v1', 'poddisruptionbudgets')!, admit: (a) => admission.admit(a) })],
      ['/pods/log', podLogHandler(kubelet.client, nodes, versions, kubelet.caPem)],
      ['/pods/exec', podConnectHandler('exec', connect)],
      ['/pods/attach', podConnectHandler('attach', connect)],
      ['/pods/portforward', podConnectHandler('portforward', connect)],
      ['/pods/proxy', podProxyHandler()],
      ['/services/proxy', serviceProxyHandler(registry.lookup('', 'v1', 'endpoints')!)],
      ['/nodes/proxy', nodeProxyHandler({ client: kubelet.client, ...(kubelet.caPem ? { caPem: kubelet.caPem } : {}) })],
    ]),
    // kubectl drain evicts only when discovery lists pods/eviction (as a policy/v1 Eviction).
    subresourceDocs: new Map([
      ['/v1/pods', [{ name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] }, ...POD_CONNECT_DOCS]],
      ['/v1/services', [{ name: 'proxy', group: '', version: 'v1', kind: 'ServiceProxyOptions', verbs: PROXY_VERBS }]],
      ['/v1/nodes', [{ name: 'proxy', group: '', version: 'v1', kind: 'NodeProxyOptions', verbs: PROXY_VERBS }]],
    ]),
    log: p.log,
    now: () => new Date(),
    checks: [storageCheck(storage), ...authz.checks, ...auth.checks],
    readyChecks: [storeWriteCheck(p.storage.writeHealth)],
    gates: flags.featureGates,
    livezGraceMs: flags.livezGracePeriodMs,
    shutdownDelayMs: flags.shutdownDelayMs,
    version: p.version,
  });
}
