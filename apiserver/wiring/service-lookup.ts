import { getOrNull } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { resolveTarget, SERVICE_NAME_LABEL, type ServiceLookup, type ServiceRef, type Target } from '../registry/service-resolver';
import type { StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';

/**
 * Services and their EndpointSlices for the API server's outbound calls (the aggregator's proxy,
 * admission and conversion webhooks): from the shared informers' caches once synced (upstream's
 * resolver reads listers), from the store until then. The informers are asked for lazily, so
 * the caller may build this before the store and informers exist.
 */
export function informerServiceLookup(store: () => ObjectStore, registry: ResourceRegistry, informers: () => StoreInformers | undefined): ServiceLookup {
  const services = registry.lookup('', 'v1', 'services')!;
  const slices = registry.lookup('discovery.svc.io', 'v1', 'endpointslices')!;
  return {
    async service(ns: string, name: string): Promise<KObject | undefined> {
      const inf = informers()?.informer(services);
      if (inf?.hasSynced()) return inf.get(`${ns}/${name}`);
      return (await getOrNull(store().get(services, ns, name))) ?? undefined;
    },
    async endpointSlices(ns: string, name: string): Promise<readonly KObject[]> {
      const inf = informers()?.informer(slices);
      const ofService = (s: KObject) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name;
      if (inf?.hasSynced()) return inf.store.byIndex('namespace', ns).filter(ofService);
      return (await store().list(slices, ns, { labelSelector: [], fieldSelector: [] })).items.filter(ofService);
    },
  };
}

/** The webhook clients' resolver (admission/webhook-client.ts ResolveService) over that lookup. */
export function serviceResolver(lookup: ServiceLookup): (ref: ServiceRef) => Promise<Target> {
  return (ref) => resolveTarget(ref, lookup);
}
