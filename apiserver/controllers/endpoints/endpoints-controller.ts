import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import { rec } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import { waitForCacheSync, type StoreInformers } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import { endpointSubsets } from './endpoint-subsets';

const ctx = controllerContext('endpoint-controller');
/** Upstream's label on the Endpoints of headless services. */
const HEADLESS_LABEL = 'service.kubernetes.io/headless';

export interface EndpointsControllerTypes {
  services: ResourceType;
  pods: ResourceType;
  endpoints: ResourceType;
}

/** Whether a pod's labels match a Service's selector (a map: every pair equal). */
function selects(svc: KObject, pod: KObject): boolean {
  const sel = rec(rec(svc.spec)?.selector);
  if (!sel || Object.keys(sel).length === 0 || pod.metadata.namespace !== svc.metadata.namespace) return false;
  const labels = pod.metadata.labels ?? {};
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/**
 * Upstream's endpoints controller: the core/v1 Endpoints of every Service with a selector, from
 * the pods it selects (endpoint-subsets.ts), written when they change and deleted with the Service.
 * Services without a selector keep Endpoints their users write. The Endpoints carry the Service's
 * labels (and service.kubernetes.io/headless for headless ones), as upstream. Design: Endpoints are
 * computed from pods directly as upstream's endpoints controller does (not mirrored from
 * EndpointSlices; upstream mirrors only the other way, Endpoints → slices, for selectorless services).
 */
export class EndpointsController {
  constructor(
    private readonly store: ObjectStore,
    private readonly types: EndpointsControllerTypes,
    private readonly informers: StoreInformers,
    private readonly log: Logger,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const services = this.informers.informer(this.types.services);
    const pods = this.informers.informer(this.types.pods);
    const queue = new WorkQueue();
    const key = (o: KObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    services.addEventHandler({ onAdd: (s) => queue.add(key(s)), onUpdate: (_o, s) => queue.add(key(s)), onDelete: (s) => queue.add(key(s)) }, { signal });
    const byPod = (...ps: KObject[]) => {
      for (const svc of services.store.list()) if (ps.some((p) => selects(svc, p))) queue.add(key(svc));
    };
    pods.addEventHandler({ onAdd: (p) => byPod(p), onUpdate: (old, p) => byPod(old, p), onDelete: (p) => byPod(p) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, services, pods))) return;
    await runWorkers(
      queue,
      async (k) => {
        const svc = services.get(k);
        const [namespace, name] = k.split('/');
        if (!svc) return this.remove(namespace, name);
        if (!rec(rec(svc.spec)?.selector)) return;
        await this.sync(svc, pods.store.list().filter((p) => selects(svc, p)));
      },
      signal,
      { onError: (k, err) => this.log.warn({ err, service: k }, 'syncing endpoints failed; retrying') },
    );
  }

  /** Writes the Service's Endpoints from the pods it selects (unchanged ones are left alone). */
  async sync(svc: KObject, pods: readonly KObject[]): Promise<void> {
    const namespace = svc.metadata.namespace!;
    const name = svc.metadata.name!;
    const subsets = endpointSubsets(svc, pods);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (rec(svc.spec)?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
    // A conflict or failure is retried by the queue with back-off.
    await this.store.update(
      this.types.endpoints,
      namespace,
      name,
      (cur): KObject => {
        if (cur && isDeepStrictEqual(cur.subsets ?? [], subsets) && isDeepStrictEqual(cur.metadata.labels ?? {}, labels)) return cur;
        const metadata = { ...(cur?.metadata ?? {}), name, namespace, labels };
        return { apiVersion: 'v1', kind: 'Endpoints', ...(cur ?? {}), metadata, subsets };
      },
      ctx,
      true,
    );
  }

  private async remove(namespace: string, name: string): Promise<void> {
    try {
      await this.store.delete(this.types.endpoints, namespace, name, {}, ctx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
