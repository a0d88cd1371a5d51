import type { Logger } from 'pino';
import { AdmissionChain } from '../admission/admission';
import { CsrRequestor } from '../admission/csr-requestor';
import { DefaultTolerationSeconds } from '../admission/default-toleration-seconds';
import { NamespaceLifecycle } from '../admission/namespace-lifecycle';
import { NodeRestriction } from '../admission/node-restriction';
import { ServiceAccountAdmission } from '../admission/service-account';
import { getOrNull } from '../api/errors';
import type { ApiServerFlags } from '../config/flags';
import type { ApiMetrics } from '../metrics/registry';
import { StoreInformers } from '../store/list-watch';
import { ObjectStore } from '../store/object-store';
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
  const nsType = registry.lookup('', 'v1', 'namespaces')!;
  const podType = registry.lookup('', 'v1', 'pods')!;
  const saType = registry.lookup('', 'v1', 'serviceaccounts')!;
  const nodeType = registry.lookup('', 'v1', 'nodes')!;
  let store: ObjectStore | undefined;
  let authz: Authorization | undefined;
  const admission = new AdmissionChain([
    new NamespaceLifecycle((name) => getOrNull(store!.get(nsType, '', name))),
    new CsrRequestor(),
    new NodeRestriction(
      (ns, name) => getOrNull(store!.get(podType, ns, name)),
      (name) => getOrNull(store!.get(nodeType, '', name)),
    ),
    new ServiceAccountAdmission((ns, name) => getOrNull(store!.get(saType, ns, name))),
    new DefaultTolerationSeconds(flags.defaultNotReadyTolerationSeconds, flags.defaultUnreachableTolerationSeconds),
    // RBAC escalation prevention needs the authorizer chain, built just below from the same store.
    { name: 'RBACEscalation', validate: (a) => authz!.escalation.validate!(a) },
  ]);
  store = new ObjectStore(s.storage, s.cache, admission, { now: () => new Date(), rvWaitMs: 3000 });
  const informers = new StoreInformers(store, s.cache, { log: log.child({ component: 'informer' }), minWatchTimeoutMs: flags.controllerWatchTimeoutMs });
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
  return { store, admission, informers, authz, events };
}
