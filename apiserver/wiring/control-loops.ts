import { discoveryCheck, remoteGet } from '../aggregator/discovery-check';
import { openApiFetcher } from '../aggregator/remote-openapi';
import { realClock } from '../../common/informer/clock';
import { ApiServiceAvailability } from '../controllers/apiservice-availability';
import { ensureLocalApiServices } from '../controllers/local-apiservices';
import { proxyClientIdentity } from './tls';
import { randomUUID } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import { bigToIp } from '../../common/cidr';
import type { Logger } from 'pino';
import { NamespaceLifecycle } from '../admission/namespace-lifecycle';
import { isAlreadyExists, isConflict } from '../api/errors';
import { ensureClusterInfo } from '../authn/cluster-info';
import type { ApiServerFlags } from '../config/flags';
import { isLoopback } from '../config/network-flags';
import { BootstrapSigner } from '../controllers/bootstrap-signer';
import { Compactor } from '../controllers/compactor';
import { CrdController } from '../controllers/crd-controller';
import { postToHook } from '../admission/webhook-client';
import { informerServiceLookup, serviceResolver } from './service-lookup';
import { CsrApprover } from '../controllers/csr-approver';
import { CsrSigner } from '../controllers/csr-signer';
import { DisruptionController } from '../controllers/disruption';
import { EventTtlController } from '../controllers/event-ttl';
import { EndpointsController } from '../controllers/endpoints/endpoints-controller';
import { EndpointSliceController } from '../controllers/endpoints/endpointslice-controller';
import { EndpointSliceMirroringController } from '../controllers/endpoints/endpointslice-mirroring';
import { GarbageCollector } from '../controllers/garbage-collector';
import { HpaController } from '../controllers/hpa/hpa-controller';
import type { PodUsageSource } from '../controllers/hpa/hpa-metrics';
import { KubernetesServiceReconciler } from '../controllers/kubernetes-service';
import { LeaderElector } from '../controllers/leader-election';
import { NamespaceController } from '../controllers/namespace-controller';
import { NodeIpamController } from '../controllers/node-ipam';
import { NodeLifecycleController } from '../controllers/node-lifecycle';
import { ensureLocalPathClass } from '../controllers/local-path-provisioner';
import { PvBinder } from '../controllers/pv-binder';
import { ResourceQuotaController } from '../controllers/resource-quota';
import { ValidatingAdmissionPolicyStatusController } from '../controllers/vap-typechecking';
import { RootCaPublisher } from '../controllers/root-ca-publisher';
import { ServiceAccountsController } from '../controllers/serviceaccounts';
import { ServiceAllocationController } from '../controllers/service-allocation';
import { TaintEvictionController } from '../controllers/taint-eviction';
import { TokenCleaner } from '../controllers/token-cleaner';
import { CronJobController } from '../controllers/workloads/cronjob-controller';
import { DaemonSetController } from '../controllers/workloads/daemonset-controller';
import { DeploymentController } from '../controllers/workloads/deployment-controller';
import { JobController } from '../controllers/workloads/job-controller';
import { ReplicaSetController } from '../controllers/workloads/replicaset-controller';
import { StatefulSetController } from '../controllers/workloads/statefulset-controller';
import { ensureSystemPriorityClasses } from '../controllers/system-priority-classes';
import { TtlAfterFinishedController } from '../controllers/workloads/ttl-after-finished';
import type { ResourceType } from '../registry/resource-type';
import { Scheduler } from '../scheduler/scheduler';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import { KeyedRange } from '../store/service-alloc/keyed-range';
import { nodeCidrRange } from '../store/service-alloc/node-cidrs';
import { moveViewObjects } from '../store/view-migration';
import { HISTORY_MS, type StorageLayer } from './storage';
import type { StoreLayer } from './store';
import type { ServingTls } from './tls';

/**
 * Runs until the signal aborts: once the store is reachable, the system namespaces and
 * cluster-info (svc-public: the CA and address for joining nodes, 5.9), objects an older svc stored
 * under a type's own keys moved to the storage the type now shares (store/view-migration.ts), then the control loops
 * (upstream's controller manager) on the replica holding the leader Lease, or on this one
 * without --leader-elect.
 */
export async function runControlLoops(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, tls: ServingTls, log: Logger, signal: AbortSignal, usage?: PodUsageSource): Promise<void> {
  const { store } = core;
  const nsType = s.registry.lookup('', 'v1', 'namespaces')!;
  const host = flags.bindAddress === '0.0.0.0' || flags.bindAddress === '::' ? hostname() : flags.bindAddress;
  const clusterServer = `https://${host}:${flags.securePort}`;
  const bootstrap = s.cache.whenReady().then(() =>
    retry(async () => {
      await ensureSystemNamespaces(store, nsType);
      await moveViewObjects(s.storage, s.registry.all(), log);
      await ensureClusterInfo(store, s.registry, { server: clusterServer, caPem: tls.pki.ca.certPem });
      await ensureSystemPriorityClasses(store, s.registry);
      await ensureLocalApiServices(store, s.registry);
      if (flags.localPathProvisioner) await ensureLocalPathClass(store, s.registry.lookup('storage.svc.io', 'v1', 'storageclasses')!);
    }, signal, log),
  );
  const controllers = (leading: AbortSignal) => runControllers(flags, s, core, tls, log, leading, usage);
  const elector = new LeaderElector(store, s.registry.lookup('coordination.svc.io', 'v1', 'leases')!, {
    namespace: 'svc-system',
    name: 'svc-controller-manager',
    identity: `${hostname()}_${randomUUID()}`,
    leaseDurationMs: flags.leaderElectLeaseDurationMs,
    renewDeadlineMs: flags.leaderElectRenewDeadlineMs,
    retryPeriodMs: flags.leaderElectRetryPeriodMs,
    now: () => new Date(),
    log: log.child({ component: 'leader-election' }),
  });
  await bootstrap;
  const hookClient = { services: serviceResolver(informerServiceLookup(() => store, s.registry, () => core.informers)) };
  // Every replica proxies to aggregated servers, so every replica follows their availability (as upstream).
  const availability = new ApiServiceAvailability(store, {
    apiServices: s.registry.lookup('apiregistration.svc.io', 'v1', 'apiservices')!,
    services: s.registry.lookup('', 'v1', 'services')!,
    endpointSlices: s.registry.lookup('discovery.svc.io', 'v1', 'endpointslices')!,
    remote: core.remoteApis,
    check: discoveryCheck(proxyClientIdentity(flags)),
    openApi: openApiFetcher(remoteGet(proxyClientIdentity(flags)), () => realClock.now()),
    informers: core.informers,
    clock: realClock,
    log: log.child({ controller: 'apiservice-availability' }),
  }).run(signal);
  // Every replica serves the custom resources, so every one follows the CRDs (upstream's apiextensions controllers are not leader-elected).
  const crds = new CrdController(store, s.cache, s.registry, { log: log.child({ controller: 'customresourcedefinition' }), informers: core.informers, conversion: { post: (cc, review, timeout) => postToHook(cc, review, timeout, hookClient) } }).run(signal);
  await Promise.all([availability, crds, kubernetesService(flags, s, core, log).run(signal), flags.leaderElect ? elector.run(signal, controllers) : controllers(signal)]);
}

/** The node IPAM controller over --cluster-cidr, subnets handed out in order (upstream's cidrset). */
function nodeIpam(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, log: Logger): NodeIpamController {
  const pools = flags.network.clusterCidrs.map((c) => {
    const spec = nodeCidrRange(c, flags.network.nodeCidrMaskSize[c.family]);
    return { range: new KeyedRange(s.storage, spec, () => 0), cidrOf: spec.cidrOf };
  });
  const recorder = core.events.recorder('node-ipam-controller');
  return new NodeIpamController(core.store, s.registry.lookup('', 'v1', 'nodes')!, pools, core.informers, { log: log.child({ controller: 'node-ipam' }), recorder });
}

/** The kubernetes Service's reconciler, run on every replica (upstream's endpoint reconciler): this server's address and port. */
function kubernetesService(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, log: Logger): KubernetesServiceReconciler {
  const lookup = (group: string, resource: string) => s.registry.lookup(group, 'v1', resource)!;
  const hostIp = Object.values(networkInterfaces()).flat().find((i) => i && !i.internal && i.family === 'IPv4')?.address ?? '127.0.0.1';
  const bound = flags.bindAddress === '0.0.0.0' || flags.bindAddress === '::' || isLoopback(flags.bindAddress) ? undefined : flags.bindAddress;
  const primary = flags.network.serviceCidrs[0];
  return new KubernetesServiceReconciler(core.store, { services: lookup('', 'services'), endpoints: lookup('', 'endpoints'), leases: lookup('coordination.svc.io', 'leases') }, {
    address: flags.network.advertiseAddress ?? bound ?? hostIp,
    port: flags.securePort,
    clusterIP: bigToIp(primary.base + 1n, primary.family),
    now: () => new Date(),
    log: log.child({ controller: 'kubernetes-service' }),
  });
}

/** Every control loop, until the leading signal aborts. */
async function runControllers(flags: ApiServerFlags, s: StorageLayer, core: StoreLayer, tls: ServingTls, log: Logger, leading: AbortSignal, usage?: PodUsageSource): Promise<void> {
  const { storage, cache, registry } = s;
  const { store, authz, informers, events } = core;
  const { ca } = tls.pki;
  const now = () => new Date();
  const loops = [
    new NamespaceController(store, cache, registry, log.child({ controller: 'namespace' }), informers).run(leading),
    new GarbageCollector(store, cache, registry, log.child({ controller: 'garbage-collector' }), informers).run(leading),
    new Compactor(storage, { retainMs: HISTORY_MS, intervalMs: 60_000, now: Date.now, log }).run(leading),
    new EventTtlController(store, cache, registry, { ttlMs: flags.eventTtlMs, log: log.child({ controller: 'event-ttl' }), informers }).run(leading),
    new CsrApprover(store, cache, registry, { now, log: log.child({ controller: 'csrapproving' }), informers }).run(leading),
    new CsrSigner(store, cache, registry, { ca, now, maxValidityMs: flags.clusterSigningDurationMs, log: log.child({ controller: 'csrsigning' }), informers }).run(leading),
    new NodeLifecycleController(store, cache, registry, {
      gracePeriodMs: flags.nodeMonitorGracePeriodMs,
      now,
      log: log.child({ controller: 'node-lifecycle' }),
      informers,
      recorder: events.recorder('node-controller'),
    }).run(leading),
    authz.aggregation.run(leading),
    new ServiceAccountsController(store, cache, registry, log.child({ controller: 'serviceaccount' }), informers).run(leading),
    // The CA that signs the serving certificate we generate; with --tls-cert-file, the operator's CA is expected to be the same.
    new RootCaPublisher(store, cache, registry, { caPem: ca.certPem, log: log.child({ controller: 'root-ca-cert-publisher' }), informers }).run(leading),
    new ValidatingAdmissionPolicyStatusController(store, cache, registry, { log: log.child({ controller: 'validatingadmissionpolicy-status' }), informers }).run(leading),
    new TaintEvictionController(store, cache, registry, { now, log: log.child({ controller: 'taint-eviction' }), informers, recorder: events.recorder('taint-eviction-controller') }).run(leading),
    new ServiceAllocationController(registry.lookup('', 'v1', 'services')!, core.serviceAllocator.ranges, informers, { log: log.child({ controller: 'service-allocation' }), recorder: events.recorder('ipallocator-repair-controller') }).run(leading),
    new EndpointsController(store, { services: registry.lookup('', 'v1', 'services')!, pods: registry.lookup('', 'v1', 'pods')!, endpoints: registry.lookup('', 'v1', 'endpoints')! }, informers, log.child({ controller: 'endpoint' })).run(leading),
    new EndpointSliceController(
      store,
      { services: registry.lookup('', 'v1', 'services')!, pods: registry.lookup('', 'v1', 'pods')!, nodes: registry.lookup('', 'v1', 'nodes')!, endpointSlices: registry.lookup('discovery.svc.io', 'v1', 'endpointslices')! },
      informers,
      log.child({ controller: 'endpointslice' }),
    ).run(leading),
    new EndpointSliceMirroringController(
      store,
      { services: registry.lookup('', 'v1', 'services')!, endpoints: registry.lookup('', 'v1', 'endpoints')!, endpointSlices: registry.lookup('discovery.svc.io', 'v1', 'endpointslices')! },
      informers,
      log.child({ controller: 'endpointslicemirroring' }),
    ).run(leading),
    ...(flags.network.clusterCidrs.length ? [nodeIpam(flags, s, core, log).run(leading)] : []),
    new ReplicaSetController(store, cache, registry, { log: log.child({ controller: 'replicaset' }), recorder: events.recorder('replicaset-controller'), informers }).run(leading),
    new DeploymentController(store, cache, registry, { log: log.child({ controller: 'deployment' }), recorder: events.recorder('deployment-controller'), informers }).run(leading),
    new StatefulSetController(store, cache, registry, { log: log.child({ controller: 'statefulset' }), recorder: events.recorder('statefulset-controller'), informers }).run(leading),
    new DaemonSetController(store, cache, registry, { log: log.child({ controller: 'daemonset' }), recorder: events.recorder('daemonset-controller'), informers }).run(leading),
    new DisruptionController(store, cache, registry, { log: log.child({ controller: 'disruption' }), informers, recorder: events.recorder('controllermanager') }).run(leading),
    new ResourceQuotaController(store, cache, registry, { log: log.child({ controller: 'resourcequota' }), informers }).run(leading),
    // Upstream runs the scheduler as its own process with its own election; here it is one more loop.
    new Scheduler(store, cache, registry, { now, log: log.child({ controller: 'scheduler' }), informers, recorder: events.recorder('default-scheduler') }).run(leading),
    new JobController(store, cache, registry, { now, log: log.child({ controller: 'job' }), recorder: events.recorder('job-controller'), informers }).run(leading),
    new CronJobController(store, cache, registry, { now, log: log.child({ controller: 'cronjob' }), recorder: events.recorder('cronjob-controller'), informers }).run(leading),
    new TtlAfterFinishedController(store, cache, registry, { now, log: log.child({ controller: 'ttl-after-finished' }), informers }).run(leading),
    new PvBinder(store, cache, registry, { now, log: log.child({ controller: 'persistentvolume-binder' }), informers, recorder: events.recorder('persistentvolume-controller'), localPath: flags.localPathProvisioner }).run(leading),
  ];
  // The HPA reads the resource metrics this process scrapes (wiring/resource-metrics.ts).
  if (usage) {
    const hpa = { usage, syncPeriodMs: flags.hpaSyncPeriodMs, downscaleStabilizationMs: flags.hpaDownscaleStabilizationMs, informers, recorder: events.recorder('horizontal-pod-autoscaler') };
    loops.push(new HpaController(store, cache, registry, { ...hpa, log: log.child({ controller: 'horizontal-pod-autoscaler' }) }).run(leading));
  }
  // Upstream's token cleaner is opt-in; here it runs whenever bootstrap tokens are accepted.
  if (flags.enableBootstrapTokenAuth) {
    loops.push(new TokenCleaner(store, cache, registry, { now, log: log.child({ controller: 'tokencleaner' }), informers }).run(leading));
    loops.push(new BootstrapSigner(store, cache, registry, { now, log: log.child({ controller: 'bootstrapsigner' }), informers }).run(leading));
  }
  await Promise.allSettled(loops);
}

/** Runs fn until it succeeds or the signal aborts, backing off from 200 ms to 5 s. */
async function retry(fn: () => Promise<void>, signal: AbortSignal, log: Logger): Promise<void> {
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
async function ensureSystemNamespaces(store: ObjectStore, nsType: ResourceType): Promise<void> {
  const ctx = controllerContext('bootstrap');
  for (const name of NamespaceLifecycle.immortal) {
    try {
      await store.create(nsType, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, ctx);
    } catch (err) {
      // Another replica (or an earlier start) made it: a create answers 409 AlreadyExists.
      if (!isAlreadyExists(err) && !isConflict(err)) throw err;
    }
  }
}
