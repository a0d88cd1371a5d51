import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import type { KObject } from '../../api/types';
import { rec } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import { waitForCacheSync, type StoreInformers } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import { planSlices } from './endpoint-slices';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './endpointslice-controller';
import { mirroredGroups } from './endpoints-mirror';
import { logSyncError, SliceWriter, type SliceMeta } from './slice-writer';

const ctx = controllerContext('endpointslicemirroring-controller');
export const MIRRORING_MANAGED_BY = 'endpointslicemirroring-controller.k8s.io';
/** Upstream's opt-out label on Endpoints. */
const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

export interface EndpointSliceMirroringTypes {
  services: ResourceType;
  endpoints: ResourceType;
  endpointSlices: ResourceType;
}

/** Whether upstream mirrors these Endpoints: its Service exists without a selector and it is not opted out. */
function mirrors(svc: KObject | undefined, ep: KObject | undefined): boolean {
  if (!svc || !ep || ep.metadata.labels?.[SKIP_MIRROR_LABEL] === 'true') return false;
  const sel = rec(rec(svc.spec)?.selector);
  return !sel || Object.keys(sel).length === 0;
}

/**
 * Upstream's endpointslicemirroring controller: the Endpoints of Services without a selector (the
 * `kubernetes` Service, user-managed backends) mirrored into EndpointSlices (endpoints-mirror.ts),
 * so consumers of slices (a network proxy, DNS) see them too. Slices carry the Endpoints' labels,
 * the service name and this controller as manager, are owned by the Endpoints, at most 100
 * endpoints each; none are made for empty Endpoints (no placeholder, as upstream). Differs:
 * upstream caps a mirror at 1000 addresses (annotating the Endpoints); here all are mirrored.
 */
export class EndpointSliceMirroringController {
  private readonly writer: SliceWriter;

  constructor(
    store: ObjectStore,
    private readonly types: EndpointSliceMirroringTypes,
    private readonly informers: StoreInformers,
    private readonly log: Logger,
  ) {
    this.writer = new SliceWriter(store, types.endpointSlices, ctx);
  }

  async run(signal: AbortSignal): Promise<void> {
    const services = this.informers.informer(this.types.services);
    const endpoints = this.informers.informer(this.types.endpoints);
    const slices = this.informers.informer(this.types.endpointSlices);
    const queue = new WorkQueue();
    const enqueue = (o: KObject) => queue.add(`${o.metadata.namespace}/${o.metadata.name}`);
    for (const inf of [services, endpoints]) inf.addEventHandler({ onAdd: enqueue, onUpdate: (_o, n) => enqueue(n), onDelete: enqueue }, { signal });
    const bySlice = (s: KObject) => {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (svc && s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORING_MANAGED_BY) queue.add(`${s.metadata.namespace}/${svc}`);
    };
    slices.addEventHandler({ onAdd: bySlice, onUpdate: (_o, s) => bySlice(s), onDelete: bySlice }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, services, endpoints, slices))) return;
    await runWorkers(
      queue,
      async (k) => {
        const [namespace, name] = k.split('/');
        const managed = slices.store.list().filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORING_MANAGED_BY);
        this.writer.checkFresh(k, managed);
        await this.sync(k, services.get(k), endpoints.get(k), managed);
      },
      signal,
      { onError: (k, err) => logSyncError(this.log, k, err, 'mirroring endpoints to slices') },
    );
  }

  /** Brings the mirrored slices of one Service to its Endpoints (all deleted when they are not mirrored). */
  async sync(k: string, svc: KObject | undefined, ep: KObject | undefined, managed: readonly KObject[]): Promise<void> {
    const [namespace] = k.split('/');
    if (!mirrors(svc, ep)) {
      if (managed.length) await this.writer.apply(k, namespace, { create: [], update: [], delete: managed.map((s) => s.metadata.name!) }, managed, undefined);
      return;
    }
    await this.writer.apply(k, namespace, planSlices(mirroredGroups(ep!), managed, undefined), managed, metadata(ep!));
  }
}

function metadata(ep: KObject): SliceMeta {
  const labels: Record<string, string> = { ...(ep.metadata.labels ?? {}), [SERVICE_NAME_LABEL]: ep.metadata.name!, [MANAGED_BY_LABEL]: MIRRORING_MANAGED_BY };
  const ownerReferences = [{ apiVersion: 'v1', kind: 'Endpoints', name: ep.metadata.name!, uid: ep.metadata.uid!, controller: true, blockOwnerDeletion: true }];
  return { labels, ownerReferences, generateName: `${ep.metadata.name}-` };
}
