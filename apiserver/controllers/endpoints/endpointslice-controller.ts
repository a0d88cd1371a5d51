import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import type { KObject } from '../../api/types';
import { rec } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import { waitForCacheSync, type StoreInformers } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import { addressTypes, desiredGroups, planSlices } from './endpoint-slices';
import { logSyncError, SliceWriter, type SliceMeta } from './slice-writer';

const ctx = controllerContext('endpointslice-controller');
/** Upstream's labels on managed slices. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
const HEADLESS_LABEL = 'service.kubernetes.io/headless';
const ZONE_LABEL = 'topology.kubernetes.io/zone';

export interface EndpointSliceControllerTypes {
  services: ResourceType;
  pods: ResourceType;
  nodes: ResourceType;
  endpointSlices: ResourceType;
}

function selects(svc: KObject, pod: KObject): boolean {
  const sel = rec(rec(svc.spec)?.selector);
  if (!sel || Object.keys(sel).length === 0 || pod.metadata.namespace !== svc.metadata.namespace) return false;
  const labels = pod.metadata.labels ?? {};
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** Whether the controller keeps this Service's slices: upstream leaves selectorless and ExternalName Services (kubernetes#105986) alone. */
export function managesSlices(svc: KObject): boolean {
  const sel = rec(rec(svc.spec)?.selector);
  return !!sel && Object.keys(sel).length > 0 && rec(svc.spec)?.type !== 'ExternalName';
}

/**
 * Upstream's endpointslice controller: the discovery/v1 EndpointSlices of every Service with a
 * selector (endpoint-slices.ts computes and packs them), labelled with the service name and this
 * controller as manager, owned by the Service (the garbage collector removes them with it; a sync
 * of a gone Service deletes them too). Like upstream's endpointSliceTracker, it remembers what it
 * wrote and refuses to sync a Service while the slice informer has not seen those writes (the
 * queue retries), so a lagging cache never makes it create a duplicate slice.
 */
export class EndpointSliceController {
  private readonly writer: SliceWriter;

  constructor(
    store: ObjectStore,
    private readonly types: EndpointSliceControllerTypes,
    private readonly informers: StoreInformers,
    private readonly log: Logger,
  ) {
    this.writer = new SliceWriter(store, types.endpointSlices, ctx);
  }

  async run(signal: AbortSignal): Promise<void> {
    const services = this.informers.informer(this.types.services);
    const pods = this.informers.informer(this.types.pods);
    const nodes = this.informers.informer(this.types.nodes);
    const slices = this.informers.informer(this.types.endpointSlices);
    const queue = new WorkQueue();
    const key = (o: KObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    const onSvc = (s: KObject) => queue.add(key(s));
    services.addEventHandler({ onAdd: onSvc, onUpdate: (_o, s) => onSvc(s), onDelete: onSvc }, { signal });
    const byPod = (...ps: KObject[]) => {
      for (const svc of services.store.list()) if (ps.some((p) => selects(svc, p))) queue.add(key(svc));
    };
    pods.addEventHandler({ onAdd: (p) => byPod(p), onUpdate: (old, p) => byPod(old, p), onDelete: (p) => byPod(p) }, { signal });
    // A changed zone label moves the node's endpoints to another zone.
    const byNode = (n: KObject) => byPod(...pods.store.list().filter((p) => rec(p.spec)?.nodeName === n.metadata.name));
    nodes.addEventHandler({ onUpdate: (o, n) => o.metadata.labels?.[ZONE_LABEL] !== n.metadata.labels?.[ZONE_LABEL] && byNode(n) }, { signal });
    // A slice changed or deleted by someone else is put back.
    const bySlice = (s: KObject) => {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (svc && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) queue.add(`${s.metadata.namespace}/${svc}`);
    };
    slices.addEventHandler({ onAdd: bySlice, onUpdate: (_o, s) => bySlice(s), onDelete: bySlice }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, services, pods, nodes, slices))) return;
    await runWorkers(
      queue,
      async (k) => {
        const [namespace, name] = k.split('/');
        const managed = slices.store.list().filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY);
        this.checkFresh(k, managed);
        const svc = services.get(k);
        // A gone Service loses its slices.
        if (svc && !managesSlices(svc)) return;
        const selected = svc ? pods.store.list().filter((p) => selects(svc, p)) : [];
        const zoneOf = (node: string) => nodes.get(node)?.metadata.labels?.[ZONE_LABEL];
        await this.sync(k, svc, selected, managed, zoneOf);
      },
      signal,
      { workers: 2, onError: (k, err) => logSyncError(this.log, k, err, 'syncing endpoint slices') },
    );
  }

  /** Brings one Service's managed slices to what its pods call for (svc undefined: it is gone). */
  async sync(k: string, svc: KObject | undefined, pods: readonly KObject[], managed: readonly KObject[], zoneOf: (node: string) => string | undefined): Promise<void> {
    const [namespace] = k.split('/');
    const plan = svc ? planSlices(desiredGroups(svc, pods, zoneOf), managed, addressTypes(svc)[0]) : { create: [], update: [], delete: managed.map((s) => s.metadata.name!) };
    await this.writer.apply(k, namespace, plan, managed, svc && metadata(svc));
  }

  /** Throws while the slice informer lags behind this controller's writes (see SliceWriter). */
  checkFresh(k: string, managed: readonly KObject[]): void {
    this.writer.checkFresh(k, managed);
  }
}

/** Upstream's labels and owner: the Service's labels, the service name, the manager, headless; owned by the Service. */
function metadata(svc: KObject): SliceMeta {
  const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: svc.metadata.name!, [MANAGED_BY_LABEL]: MANAGED_BY };
  if (rec(svc.spec)?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  const ownerReferences = [{ apiVersion: 'v1', kind: 'Service', name: svc.metadata.name!, uid: svc.metadata.uid!, controller: true, blockOwnerDeletion: true }];
  return { labels, ownerReferences, generateName: `${svc.metadata.name}-` };
}
