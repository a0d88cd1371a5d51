import { RemoteApis } from '../aggregator/remote-apis';
import type { Logger } from 'pino';
import type { AdmissionChain } from '../admission/admission';
import type { ApiServerFlags } from '../config/flags';
import type { ApiMetrics } from '../metrics/registry';
import { StoreInformers } from '../store/list-watch';
import { ObjectStore } from '../store/object-store';
import type { DeclarativeValidationOptions } from '../store/declarative-validation';
import { gateOn } from '../config/feature-gates';
import { AllocatingAdmission } from '../store/service-alloc/allocating-admission';
import { buildServiceAllocator } from '../store/service-alloc/build';
import type { ServiceAllocator } from '../store/service-alloc/service-allocator';
import { buildAdmission } from './admission';
import { buildAuthorizers, type Authorization } from './authorization';
import { EventRecorders } from './events';
import type { StorageLayer } from './storage';

/** The store phase's result: the object store, the admission chain inside it, the shared informers, and authorization over it. */
export interface StoreLayer {
  store: ObjectStore;
  admission: AdmissionChain;
  /** One informer per followed type, shared by the authorizers, the authenticators' caches and every control loop. */
  informers: StoreInformers;
  authz: Authorization;
  /** The event recorders of the in-process loops: `events.recorder('<component>')`; main runs them. */
  events: EventRecorders;
  /** The remote group versions (APIServices with a service): fed by the availability controller, read by the aggregator's proxy. */
  remoteApis: RemoteApis;
  /** Cluster IPs and node ports of Services, taken inside the store's writes; its controller releases and repairs. */
  serviceAllocator: ServiceAllocator;
}

/**
 * Builds the ObjectStore with its admission chain, and the authorizer chain. They refer to each
 * other: admission plugins read through the store, RBAC escalation prevention (an admission
 * plugin) asks the authorizer chain, and the authorizers' informers follow the store; so the
 * plugins reach the store and the chain late, once all three exist (nothing is called before).
 * Throws AuthorizationConfigError for a malformed authorization flag or file.
 */
export function buildStore(flags: ApiServerFlags, s: StorageLayer, log: Logger, metrics?: ApiMetrics): StoreLayer {
  const { registry } = s;
  let store: ObjectStore | undefined;
  let authz: Authorization | undefined;
  // Plugins reach the store and the authorizer chain late: both are built just below.
  let informers: StoreInformers | undefined;
  const admission = buildAdmission(flags, { registry, store: () => store!, escalation: () => authz!.escalation, informers: () => informers! });
  const serviceAllocator = buildServiceAllocator(s.storage, flags.network.serviceCidrs, flags.network.nodePortRange);
  store = new ObjectStore(s.storage, s.cache, new AllocatingAdmission(admission, serviceAllocator), {
    now: () => new Date(),
    rvWaitMs: 3000,
    lists: s.lists,
    declarativeValidation: declarativeValidation(flags, log, metrics),
  });
  informers = new StoreInformers(store, s.cache, { log: log.child({ component: 'informer' }), minWatchTimeoutMs: flags.controllerWatchTimeoutMs });
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
    { store, cache: s.cache, registry, log, informers },
  );
  const events = new EventRecorders(store, registry, { log, onDropped: (component, reason) => metrics?.eventDropped(component, reason) });
  return { store, admission, informers, authz, events, serviceAllocator, remoteApis: new RemoteApis() };
}

/** The DeclarativeValidation gates; mismatches and panics counted and logged at info (kind, field, type: never a value). */
function declarativeValidation(flags: ApiServerFlags, log: Logger, metrics?: ApiMetrics): DeclarativeValidationOptions {
  const dvLog = log.child({ component: 'declarative-validation' });
  return {
    enabled: gateOn(flags.featureGates, 'DeclarativeValidation'),
    takeover: gateOn(flags.featureGates, 'DeclarativeValidation') && gateOn(flags.featureGates, 'DeclarativeValidationTakeover'),
    report: {
      mismatch(detail) {
        metrics?.declarativeValidationMismatch();
        dvLog.info(detail);
      },
      panic(detail) {
        metrics?.declarativeValidationPanic();
        dvLog.warn(detail);
      },
    },
  };
}
