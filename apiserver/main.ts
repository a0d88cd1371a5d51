import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createSdNotifier } from '../common/systemd';
import { svcVersion } from '../common/version';
import { AdmissionChain } from './admission/admission';
import { CsrRequestor } from './admission/csr-requestor';
import { DefaultTolerationSeconds } from './admission/default-toleration-seconds';
import { NamespaceLifecycle } from './admission/namespace-lifecycle';
import { ApiError } from './api/errors';
import { buildAuthentication, type Authentication } from './authn/authentication';
import { AuthenticationConfigError } from './authn/authentication-config';
import { ensureClusterInfo } from './authn/cluster-info';
import { impersonate } from './authn/impersonation';
import { MetricsRegistry } from './authn/metrics';
import { authenticationOptions } from './config/authn-options';
import { BootstrapSigner } from './controllers/bootstrap-signer';
import { authenticationTypes } from './registry/types/authentication-types';
import { NodeRestriction } from './admission/node-restriction';
import { ServiceAccountAdmission } from './admission/service-account';
import { buildAuthorizers, type Authorization } from './authz/build';
import { AuthorizationConfigError } from './authz/config-error';
import { ServiceAccountsController } from './controllers/serviceaccounts';
import { RootCaPublisher } from './controllers/root-ca-publisher';
import { FlagError, helpText, parseFlags, type ApiServerFlags } from './config/flags';
import { Compactor } from './controllers/compactor';
import { handleCsrApproval } from './controllers/csr-approval';
import { CsrApprover } from './controllers/csr-approver';
import { CsrSigner } from './controllers/csr-signer';
import { NodeLifecycleController } from './controllers/node-lifecycle';
import { TaintEvictionController } from './controllers/taint-eviction';
import { TokenCleaner } from './controllers/token-cleaner';
import { GarbageCollector } from './controllers/garbage-collector';
import { NamespaceController } from './controllers/namespace-controller';
import { LeaderElector } from './controllers/leader-election';
import { controllerContext } from './controllers/system-context';
import { ensureServerPki } from './pki/bootstrap';
import { handlePodBinding } from './handlers/pod-binding';
import { handlePodEphemeralContainers } from './handlers/pod-ephemeral-containers';
import { makeBuiltinTypes, ResourceRegistry } from './registry/builtin';
import { Scheduler } from './scheduler/scheduler';
import { ApiMetrics } from './metrics/registry';
import { podLogHandler } from './handlers/pod-log';
import { nodeProxyHandler } from './handlers/node-proxy';
import { ApiServer } from './server/api-server';
import { InstrumentedStorage } from './storage/instrumented';
import type { EtcdStorage as EtcdStorageType } from './storage/etcd';
import { SqliteStorage } from './storage/sqlite';
import type { Storage } from './storage/storage';
import { StoreInformers } from './store/list-watch';
import { ObjectStore } from './store/object-store';
import { WatchCache } from './store/watch-cache';

const HISTORY_MS = 5 * 60_000; // section 8: watch history and continue tokens, 5 minutes
const gitVersion = svcVersion();
const [major = '0', minor = '0'] = gitVersion.replace(/^v/, '').split('.');
const VERSION = { gitVersion, major, minor };

/** Composition root: flags → store → server and control loops; runs until SIGTERM or SIGINT. */
export async function main(argv: readonly string[]): Promise<number> {
  // The store migration sub-commands (svc-apiserver export|import|verify) run instead of the
  // server; loaded only when used.
  if (argv[0] === 'export' || argv[0] === 'import' || argv[0] === 'verify') {
    const tools = require('./tools/cli') as typeof import('./tools/cli');
    return tools.runTool(argv[0], argv.slice(1), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, now: () => new Date() });
  }
  let flags: ApiServerFlags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`svc-apiserver: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText());
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`svc-apiserver ${svcVersion()}\n`);
    return 0;
  }
  const log = pino({ level: flags.logLevel, base: { component: 'svc-apiserver' } });
  // --etcd-servers selects the clustered store; otherwise the embedded SQLite one under --data-dir.
  const apiMetrics = new ApiMetrics({ processMetrics: true });
  const backend: Storage =
    flags.etcdServers.length > 0
      ? // Loaded only when used: the etcd client and gRPC cost ~10 MB of memory that SQLite users never need.
        await (require('./storage/etcd') as { EtcdStorage: typeof EtcdStorageType }).EtcdStorage.connect({
          endpoints: flags.etcdServers,
          caFile: flags.etcdCaFile,
          certFile: flags.etcdCertFile,
          keyFile: flags.etcdKeyFile,
          prefix: flags.etcdPrefix,
          onForeignEndpoint: (endpoint, clusterId, expected) =>
            log.error({ endpoint, clusterId, expected }, 'etcd endpoint belongs to another cluster than the other --etcd-servers; it is not used'),
        })
      : SqliteStorage.open(join(flags.dataDir, 'store', 'state.db'));
  // Every store call is timed into etcd_request_duration_seconds (whichever backend, as /metrics documents).
  const storage: Storage = new InstrumentedStorage(backend, apiMetrics, () => performance.now());
  const registry = new ResourceRegistry();
  for (const t of makeBuiltinTypes(Date.now)) registry.register(t);
  const cache = new WatchCache(storage, {
    retainMs: HISTORY_MS,
    now: Date.now,
    onCorrupt: (key, revision, err) => log.error({ key, revision, err: err.message }, 'stored object cannot be decoded; watchers do not get this write'),
  });
  const nsType = registry.lookup('', 'v1', 'namespaces')!;
  let store: ObjectStore | undefined;
  const lifecycle = new NamespaceLifecycle(async (name) => {
    try {
      return await store!.get(nsType, '', name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return null;
      throw err;
    }
  });
  const getOrNull = async (t: Parameters<ObjectStore['get']>[0], ns: string, name: string) => {
    try {
      return await store!.get(t, ns, name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return null;
      throw err;
    }
  };
  const podType = registry.lookup('', 'v1', 'pods')!;
  const saType = registry.lookup('', 'v1', 'serviceaccounts')!;
  let authz: Authorization | undefined;
  const admission = new AdmissionChain([
    lifecycle,
    new CsrRequestor(),
    new NodeRestriction((ns, name) => getOrNull(podType, ns, name)),
    new ServiceAccountAdmission((ns, name) => getOrNull(saType, ns, name)),
    new DefaultTolerationSeconds(flags.defaultNotReadyTolerationSeconds, flags.defaultUnreachableTolerationSeconds),
    // RBAC escalation prevention needs the authorizer chain, built just below from the same store.
    { name: 'RBACEscalation', validate: (a) => authz!.escalation.validate!(a) },
  ]);
  store = new ObjectStore(storage, cache, admission, { now: () => new Date(), rvWaitMs: 3000 });
  // One informer per followed type, shared by the authorizers, the authenticators' caches and every control loop.
  const informers = new StoreInformers(store, cache, { log: log.child({ component: 'informer' }), minWatchTimeoutMs: flags.controllerWatchTimeoutMs });
  try {
    authz = buildAuthorizers(
      {
        modes: flags.authorizationMode,
        policyFile: flags.authorizationPolicyFile,
        webhookConfigFile: flags.authorizationWebhookConfigFile,
        webhookAuthorizedTtlMs: flags.authorizationWebhookCacheAuthorizedTtlMs,
        webhookUnauthorizedTtlMs: flags.authorizationWebhookCacheUnauthorizedTtlMs,
        webhookVersion: flags.authorizationWebhookVersion,
        configFile: flags.authorizationConfig,
      },
      { store, cache, registry, log, informers },
    );
  } catch (err) {
    if (err instanceof AuthorizationConfigError) {
      process.stderr.write(`svc-apiserver: ${err.message}\n`);
      await storage.close();
      return 2;
    }
    throw err;
  }

  const pki = await ensureServerPki(flags.dataDir, { extraNames: [flags.bindAddress], port: flags.securePort });
  const serving = flags.tlsCertFile
    ? { certPem: readFileSync(flags.tlsCertFile, 'utf8'), keyPem: readFileSync(flags.tlsPrivateKeyFile!, 'utf8') }
    : pki.serving;
  const clientCaPem = pki.ca.certPem + (flags.clientCaFile ? readFileSync(flags.clientCaFile, 'utf8') : '');
  for (const t of authenticationTypes) registry.register(t);
  const metrics = new MetricsRegistry();
  apiMetrics.include(() => metrics.render());
  let auth: Authentication;
  try {
    auth = buildAuthentication(authenticationOptions(flags, clientCaPem), { store, cache, registry, metrics, log: log.child({ component: 'authn' }), now: () => new Date(), admit: (a) => admission.admit(a), informers });
  } catch (err) {
    if (err instanceof AuthenticationConfigError) {
      process.stderr.write(`svc-apiserver: ${err.message}\n`);
      await storage.close();
      return 2;
    }
    throw err;
  }
  if (auth.generatedSigningKeyPath) log.info({ path: auth.generatedSigningKeyPath }, 'generated the service account signing key');
  const chain = authz.chain;
  // Impersonation (5.7) sits between authentication and authorization: the impersonate verb is
  // checked for the caller, then the request is authorized as the impersonated user.
  const authn = {
    authenticate: async (req: IncomingMessage) =>
      impersonate(req, await auth.request.authenticate(req), (a) => chain.authorize(a).then(() => true, () => false)),
  };

  const now = () => new Date();
  const ac = new AbortController();
  // Every control loop and watch listens on this one signal; the default of 10 listeners is too few.
  setMaxListeners(100, ac.signal);
  const stop = (sig: string) => {
    if (ac.signal.aborted) return;
    log.info({ signal: sig }, 'shutdown requested');
    ac.abort();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const cacheRun = cache.run(ac.signal);
  // Informers follow for the life of the process; a loop that loses leadership only drops its handlers.
  informers.start(ac.signal);

  // The identity and trust used towards node agents (kube-apiserver's --kubelet-* flags).
  const kubeletClient =
    flags.kubeletClientCertificate && flags.kubeletClientKey
      ? { certPem: readFileSync(flags.kubeletClientCertificate, 'utf8'), keyPem: readFileSync(flags.kubeletClientKey, 'utf8') }
      : pki.kubeletClient;
  const kubeletCaPem = flags.kubeletCertificateAuthority ? readFileSync(flags.kubeletCertificateAuthority, 'utf8') : undefined;
  const server = new ApiServer({
    metrics: apiMetrics,
    host: flags.bindAddress,
    port: flags.securePort,
    tls: { ...serving, clientCaPem: auth.tlsClientCaPem ?? clientCaPem },
    registry,
    store,
    cache,
    authn,
    authz: authz.chain,
    admission,
    virtual: new Map([...authz.reviewHandlers, ...auth.virtual]),
    subresources: new Map([
      ...auth.subresources,
      ['certificates.svc.io/certificatesigningrequests/approval', handleCsrApproval],
      ['/pods/binding', handlePodBinding], // core group '' → key '/pods/binding'
      ['/pods/ephemeralcontainers', handlePodEphemeralContainers],
      ['/pods/log', podLogHandler(kubeletClient, registry.lookup('', 'v1', 'nodes')!, kubeletCaPem)],
      ['/nodes/proxy', nodeProxyHandler({ client: kubeletClient, ...(kubeletCaPem ? { caPem: kubeletCaPem } : {}) })],
    ]),
    log,
    now: () => new Date(),
    checks: [
      {
        name: 'etcd', // upstream's check name, kept for tooling; it checks whichever store is in use
        check: async () => {
          // Bounded like upstream's --etcd-healthcheck-timeout (2 s): without quorum etcd holds a
          // linearizable read until its own 7 s timeout, and a probe must not wait that long.
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('store did not answer within 2s'), 2000)));
          try {
            return await Promise.race([storage.currentRevision().then(() => undefined), timeout]);
          } catch {
            return 'store unreachable';
          } finally {
            clearTimeout(timer);
          }
        },
      },
      ...authz.checks,
      ...auth.checks,
    ],
    gates: flags.featureGates,
    livezGraceMs: flags.livezGracePeriodMs,
    shutdownDelayMs: flags.shutdownDelayMs,
    version: VERSION,
  });
  // Serving starts at once (readyz says not ready until the store answers); the system
  // namespaces and the control loops follow as soon as the store is reachable.
  // cluster-info (svc-public) carries the CA and address for joining nodes (5.9).
  const clusterServer = `https://${flags.bindAddress === '0.0.0.0' || flags.bindAddress === '::' ? hostname() : flags.bindAddress}:${flags.securePort}`;
  const bootstrap = cache.whenReady().then(() =>
    retry(async () => {
      await ensureSystemNamespaces(store!, nsType);
      await ensureClusterInfo(store!, registry, { server: clusterServer, caPem: pki.ca.certPem });
    }, ac.signal, log),
  );
  // The control loops (upstream's controller manager) run on one replica at a time.
  const controllers = async (leading: AbortSignal): Promise<void> => {
    const loops = [
      new NamespaceController(store!, cache, registry, log.child({ controller: 'namespace' }), informers).run(leading),
      new GarbageCollector(store!, cache, registry, log.child({ controller: 'garbage-collector' }), informers).run(leading),
      new Compactor(storage, { retainMs: HISTORY_MS, intervalMs: 60_000, now: Date.now, log }).run(leading),
      new CsrApprover(store!, cache, registry, { now, log: log.child({ controller: 'csrapproving' }), informers }).run(leading),
      new CsrSigner(store!, cache, registry, { ca: pki.ca, now, maxValidityMs: flags.clusterSigningDurationMs, log: log.child({ controller: 'csrsigning' }), informers }).run(leading),
      new NodeLifecycleController(store!, cache, registry, { gracePeriodMs: flags.nodeMonitorGracePeriodMs, now, log: log.child({ controller: 'node-lifecycle' }), informers }).run(leading),
      authz!.aggregation.run(leading),
      new ServiceAccountsController(store!, cache, registry, log.child({ controller: 'serviceaccount' }), informers).run(leading),
      // The CA that signs the serving certificate we generate; with --tls-cert-file, the operator's CA is expected to be the same.
      new RootCaPublisher(store!, cache, registry, { caPem: pki.ca.certPem, log: log.child({ controller: 'root-ca-cert-publisher' }), informers }).run(leading),
      new TaintEvictionController(store!, cache, registry, { now, log: log.child({ controller: 'taint-eviction' }), informers }).run(leading),
      // Upstream runs the scheduler as its own process with its own election; here it is one more loop.
      new Scheduler(store!, cache, registry, { now, log: log.child({ controller: 'scheduler' }), informers }).run(leading),
    ];
    // Upstream's token cleaner is opt-in; here it runs whenever bootstrap tokens are accepted.
    if (flags.enableBootstrapTokenAuth) {
      loops.push(new TokenCleaner(store!, cache, registry, { now, log: log.child({ controller: 'tokencleaner' }), informers }).run(leading));
      loops.push(new BootstrapSigner(store!, cache, registry, { now, log: log.child({ controller: 'bootstrapsigner' }), informers }).run(leading));
    }
    await Promise.allSettled(loops);
  };
  const leaseType = registry.lookup('coordination.svc.io', 'v1', 'leases')!;
  const elector = new LeaderElector(store, leaseType, {
    namespace: 'svc-system',
    name: 'svc-controller-manager',
    identity: `${hostname()}_${randomUUID()}`,
    leaseDurationMs: flags.leaderElectLeaseDurationMs,
    renewDeadlineMs: flags.leaderElectRenewDeadlineMs,
    retryPeriodMs: flags.leaderElectRetryPeriodMs,
    now,
    log: log.child({ component: 'leader-election' }),
  });
  const loops = [
    bootstrap.then(() => (flags.leaderElect ? elector.run(ac.signal, controllers) : controllers(ac.signal))),
    // RBAC and Node informers, default-policy reconcile (retries until the system namespaces exist), config reloads.
    authz.run(ac.signal),
    // Service account and bootstrap token lookup caches (live reads answer until they have listed), authn config reloads.
    auth.run(ac.signal),
  ];
  // Type=notify: READY=1 once the listener is bound, STOPPING=1 when shutdown begins.
  const notifier = createSdNotifier({ log });
  ac.signal.addEventListener('abort', () => notifier.stopping(), { once: true });
  await server.run(ac.signal, () => {
    if (!flags.tlsCertFile) log.info({ kubeconfig: pki.adminKubeconfig }, 'admin kubeconfig written');
    notifier.status(`serving on ${flags.bindAddress}:${flags.securePort}`);
    notifier.ready();
  });
  await Promise.allSettled([cacheRun, ...loops, informers.stopped()]);
  await authz.close();
  await storage.close();
  return 0;
}

async function retry(fn: () => Promise<void>, signal: AbortSignal, log: pino.Logger): Promise<void> {
  for (let delay = 200; !signal.aborted; delay = Math.min(delay * 2, 5000)) {
    try {
      return await fn();
    } catch (err) {
      log.warn({ err }, 'bootstrap step failed; retrying');
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** The namespaces every cluster has (default, svc-system, svc-public, svc-node-lease), created when missing. */
async function ensureSystemNamespaces(store: ObjectStore, nsType: Parameters<ObjectStore['get']>[0]): Promise<void> {
  const ctx = controllerContext('bootstrap');
  for (const name of NamespaceLifecycle.immortal) {
    try {
      await store.create(nsType, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, ctx);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`svc-apiserver: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
