import { AdmissionChain, type AdmissionPlugin } from '../admission/admission';
import { CsrRequestor } from '../admission/csr-requestor';
import { DefaultTolerationSeconds } from '../admission/default-toleration-seconds';
import { DefaultStorageClass } from '../admission/default-storage-class';
import { DefaultIngressClass } from '../admission/default-ingress-class';
import { LimitRanger } from '../admission/limit-ranger';
import { NamespaceLifecycle } from '../admission/namespace-lifecycle';
import { parsePodSecurityConfig } from '../admission/pod-security/config';
import { PodSecurityAdmission } from '../admission/pod-security/plugin';
import { NodeRestriction } from '../admission/node-restriction';
import { PriorityAdmission } from '../admission/priority';
import { forbiddenSubject, ResourceQuotaAdmission, type QuotaAccess } from '../admission/resource-quota';
import { RuntimeClassAdmission } from '../admission/runtime-class';
import { ServiceAccountAdmission } from '../admission/service-account';
import { MutatingWebhookPlugin, ValidatingWebhookPlugin } from '../admission/webhook-dispatch';
import { ValidatingAdmissionPolicyPlugin, type PolicyDeps } from '../admission/policy-plugin';
import { MutatingAdmissionPolicyPlugin } from '../admission/mutating-policy-plugin';
import { canonicalGroup } from '../api/group-names';
import { errors, getOrNull } from '../api/errors';
import type { KObject } from '../api/types';
import { loadAdmissionConfig } from '../config/admission-config';
import type { ApiServerFlags } from '../config/flags';
import { gateOn } from '../config/feature-gates';
import type { ResourceRegistry } from '../registry/builtin';
import { rec } from '../registry/obj-access';
import { add, formatResourceList, parseResourceList, subtractNonNegative } from '../registry/quota/resource-list';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore, WriteContext } from '../store/object-store';
import type { StoreInformers } from '../store/list-watch';
import { informerServiceLookup, serviceResolver } from './service-lookup';

const everything = { labelSelector: [], fieldSelector: [] };

/** The loopback identity admission writes quota status with (upstream's admission writes through the loopback client). */
const apiserverCtx: WriteContext = { user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, dryRun: false, fieldManager: 'svc-apiserver', subresource: 'status' };

export interface AdmissionDeps {
  registry: ResourceRegistry;
  /** The store and the RBAC escalation check exist only once the chain does; plugins reach them late. */
  store: () => ObjectStore;
  escalation: () => AdmissionPlugin;
  /** The shared informers (late, as the store): webhook configurations, policies and namespaces are read from their caches. */
  informers?: () => StoreInformers;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
}

/**
 * The objects of a cluster-scoped admission configuration type: the shared informer's cache once
 * it has synced, the store until then (the first requests after start, or no informers at all).
 */
export function configurationSource(d: AdmissionDeps, t: () => ResourceType): () => Promise<readonly KObject[]> {
  return async () => {
    const inf = d.informers?.().informer(t());
    if (inf?.hasSynced()) return inf.store.list();
    return (await d.store().list(t(), '', everything)).items;
  };
}

function arType(registry: ResourceRegistry, resource: string, version = 'v1'): () => ResourceType {
  return () => {
    const t = registry.lookup('admissionregistration.svc.io', version, resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  };
}

function type(registry: ResourceRegistry, resource: string): ResourceType {
  const t = registry.lookup('', 'v1', resource);
  if (!t) throw new Error(`${resource} type not registered`);
  return t;
}

function groupType(registry: ResourceRegistry, group: string, resource: string): ResourceType {
  const t = registry.lookup(group, 'v1', resource);
  if (!t) throw new Error(`${resource}.${group} type not registered`);
  return t;
}

/** status.used of quotas, read and written through the store (see QuotaAccess). */
export function storeQuotaAccess(store: () => ObjectStore, quotaType: ResourceType): QuotaAccess {
  return {
    list: async (ns) => (await store().list(quotaType, ns, everything)).items,
    async setUsed(quota, used) {
      const next: KObject = { ...structuredClone(quota), status: { ...rec(quota.status), used: formatResourceList(used) } };
      // At the version read: a concurrent charge makes this a 409 and the plugin checks again.
      await store().update(quotaType, quota.metadata.namespace ?? '', quota.metadata.name ?? '', () => next, apiserverCtx);
    },
    async addUsed(ns, name, delta) {
      await store().update(
        quotaType,
        ns,
        name,
        (cur) => {
          if (!cur) throw errors.notFound(quotaType.resource, name);
          const used = subtractNonNegative(add(parseResourceList(rec(cur.status)?.used), delta), {});
          delete cur.metadata.resourceVersion;
          return { ...cur, status: { ...rec(cur.status), used: formatResourceList(used) } };
        },
        apiserverCtx,
      );
    },
  };
}

/**
 * The admission chain of --enable-admission-plugins / --disable-admission-plugins
 * (flags.admissionPlugins, already in upstream's order), plus two steps that always run because
 * upstream does them outside admission: the CSR requestor (its CSR strategy) and RBAC escalation
 * prevention (its RBAC storage).
 */
export function buildAdmission(
  flags: Pick<ApiServerFlags, 'admissionPlugins' | 'defaultNotReadyTolerationSeconds' | 'defaultUnreachableTolerationSeconds' | 'admissionControlConfigFile'> & Partial<Pick<ApiServerFlags, 'featureGates'>>,
  d: AdmissionDeps,
): AdmissionChain {
  const { registry, store } = d;
  const pluginConfig = loadAdmissionConfig(flags.admissionControlConfigFile);
  const get = (t: ResourceType, ns: string, name: string) => getOrNull(store().get(t, ns, name));
  // NamespaceLifecycle, PodSecurity, and webhooks and policies with a namespace selector read the
  // namespace on every write: from the shared informer's cache once synced (as upstream's
  // namespace lister), else (not synced, or a namespace too new for the cache) the store, as
  // upstream falls back to a live GET.
  const cachedNamespace = (name: string): KObject | undefined => {
    const inf = d.informers?.().informer(type(registry, 'namespaces'));
    return inf?.hasSynced() ? inf.get(name) : undefined;
  };
  const liveNamespace = (name: string) => get(type(registry, 'namespaces'), '', name);
  const namespaceObject = async (name: string): Promise<KObject | undefined> => cachedNamespace(name) ?? (await liveNamespace(name)) ?? undefined;
  const namespaceLabels = async (name: string) => (await namespaceObject(name))?.metadata.labels;
  // Webhooks' service clientConfigs resolve to the Service's endpoint (registry/service-resolver.ts).
  const hookClient = { services: serviceResolver(informerServiceLookup(store, registry, () => d.informers?.())) };
  const policyDeps = (policies: () => ResourceType, bindings: () => ResourceType): PolicyDeps => ({
    policies: configurationSource(d, policies),
    bindings: configurationSource(d, bindings),
    namespace: namespaceObject,
    paramType: (apiVersion, kind) => {
      const slash = apiVersion.indexOf('/');
      return slash < 0 ? registry.byKind('', apiVersion, kind) : registry.byKind(canonicalGroup(apiVersion.slice(0, slash)), apiVersion.slice(slash + 1), kind);
    },
    getParam: async (t, ns, name) => (await get(t, ns, name)) ?? undefined,
    listParams: async (t, ns) => (await store().list(t, ns, everything)).items,
  });
  const factories: Record<string, () => AdmissionPlugin> = {
    AlwaysAdmit: () => ({ name: 'AlwaysAdmit' }),
    NamespaceLifecycle: () => new NamespaceLifecycle({ cached: cachedNamespace, live: liveNamespace, now: d.now ?? Date.now }),
    LimitRanger: () => new LimitRanger(async (ns) => (await store().list(type(registry, 'limitranges'), ns, everything)).items),
    ServiceAccount: () => new ServiceAccountAdmission((ns, name) => get(type(registry, 'serviceaccounts'), ns, name)),
    NodeRestriction: () =>
      new NodeRestriction(
        (ns, name) => get(type(registry, 'pods'), ns, name),
        (name) => get(type(registry, 'nodes'), '', name),
      ),
    DefaultTolerationSeconds: () => new DefaultTolerationSeconds(flags.defaultNotReadyTolerationSeconds, flags.defaultUnreachableTolerationSeconds),
    PodSecurity: () =>
      new PodSecurityAdmission(parsePodSecurityConfig(pluginConfig.get('PodSecurity')), {
        namespace: namespaceObject,
        pods: async (ns) => (await store().list(type(registry, 'pods'), ns, everything)).items,
      }),
    Priority: () => {
      const t = () => groupType(registry, 'scheduling.svc.io', 'priorityclasses');
      return new PriorityAdmission({ get: (name) => get(t(), '', name), list: async () => (await store().list(t(), '', everything)).items });
    },
    RuntimeClass: () => new RuntimeClassAdmission((name) => get(groupType(registry, 'node.svc.io', 'runtimeclasses'), '', name)),
    DefaultStorageClass: () => {
      const classes = registry.lookup('storage.svc.io', 'v1', 'storageclasses');
      if (!classes) throw new Error('storageclasses type not registered');
      return new DefaultStorageClass(async () => (await store().list(classes, '', everything)).items);
    },
    DefaultIngressClass: () => {
      const classes = groupType(registry, 'networking.svc.io', 'ingressclasses');
      return new DefaultIngressClass(configurationSource(d, () => classes));
    },
    MutatingAdmissionWebhook: () => new MutatingWebhookPlugin({ configurations: configurationSource(d, arType(registry, 'mutatingwebhookconfigurations')), namespaceLabels, client: hookClient }),
    MutatingAdmissionPolicy: () =>
      new MutatingAdmissionPolicyPlugin(
        policyDeps(arType(registry, 'mutatingadmissionpolicies', 'v1beta1'), arType(registry, 'mutatingadmissionpolicybindings', 'v1beta1')),
        gateOn(flags.featureGates, 'MutatingAdmissionPolicy'),
      ),
    ValidatingAdmissionPolicy: () => new ValidatingAdmissionPolicyPlugin(policyDeps(arType(registry, 'validatingadmissionpolicies'), arType(registry, 'validatingadmissionpolicybindings'))),
    ValidatingAdmissionWebhook: () => new ValidatingWebhookPlugin({ configurations: configurationSource(d, arType(registry, 'validatingwebhookconfigurations')), namespaceLabels, client: hookClient }),
    ResourceQuota: () => new ResourceQuotaAdmission(storeQuotaAccess(store, type(registry, 'resourcequotas'))),
    AlwaysDeny: () => {
      const deny = (a: Parameters<NonNullable<AdmissionPlugin['validate']>>[0]) => Promise.reject(errors.forbidden(`${forbiddenSubject(a)} is forbidden: admission control is denying all modifications`));
      return { name: 'AlwaysDeny', mutate: deny, validate: deny };
    },
  };
  const plugins = flags.admissionPlugins.map((name) => factories[name]());
  // RBAC escalation prevention stays where it ran before plugins were selectable: after the
  // others' checks and before quota is charged. The CSR requestor only mutates: after the mutators.
  const quotaAt = plugins.findIndex((p) => p.name === 'ResourceQuota' || p.name === 'AlwaysDeny');
  plugins.splice(quotaAt < 0 ? plugins.length : quotaAt, 0, { name: 'RBACEscalation', validate: (a) => d.escalation().validate!(a) });
  plugins.push(new CsrRequestor());
  return new AdmissionChain(plugins);
}
