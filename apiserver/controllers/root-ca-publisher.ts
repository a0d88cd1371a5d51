import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from '../admission/service-account';
import { ApiError, isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync, type InformerView } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('root-ca-cert-publisher');
/** Only the root CA ConfigMaps are followed (upstream filters the same way in its handlers, after caching every ConfigMap). */
const ROOT_CA_VIEW: InformerView = { name: ROOT_CA_CONFIGMAP, match: (o) => o.metadata.name === ROOT_CA_CONFIGMAP };

/** Says what the ConfigMap is for (upstream sets the same text under kubernetes.io/description). */
export const DESCRIPTION_ANNOTATION = 'svc.io/description';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the svc-apiserver when using internal endpoints such as the internal service IP or svc.default.svc. No other usage is guaranteed across distributions of svc clusters.';

export interface RootCaPublisherOptions {
  /** The PEM bundle pods use to verify the API server (the cluster CA). */
  caPem: string;
  log: Logger;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * Upstream's root-ca-cert-publisher: every active namespace holds the ConfigMap kube-root-ca.crt
 * with key ca.crt = the cluster CA bundle, which the ServiceAccount admission plugin projects
 * into every pod's token volume. The ConfigMap is created with the namespace, recreated when
 * deleted and put back when its data or description is changed; other fields (labels, other
 * annotations) are left as users set them.
 */
export class RootCaPublisher {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: RootCaPublisherOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Keeps the ConfigMaps until the signal aborts: on every namespace added or changed, and every change to a root CA ConfigMap. */
  async run(signal: AbortSignal): Promise<void> {
    const namespaces = this.informers.informer(this.type('namespaces'));
    const configMaps = this.informers.informer(this.type('configmaps'), { view: ROOT_CA_VIEW });
    const queue = new WorkQueue();
    namespaces.addEventHandler({ onAdd: (ns) => queue.add(ns.metadata.name!), onUpdate: (_old, ns) => queue.add(ns.metadata.name!) }, { signal });
    const byConfigMap = (cm: KObject) => queue.add(cm.metadata.namespace!);
    configMaps.addEventHandler({ onAdd: byConfigMap, onUpdate: (_old, cm) => byConfigMap(cm), onDelete: byConfigMap }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, namespaces, configMaps))) return;
    await runWorkers(
      queue,
      async (name) => {
        // From the caches: nothing for a namespace gone or terminating, nor when its ConfigMap is right.
        const ns = namespaces.get(name);
        if (!ns || ns.metadata.deletionTimestamp || this.upToDate(configMaps.get(`${name}/${ROOT_CA_CONFIGMAP}`))) return;
        await this.sync(name);
      },
      signal,
      { onError: (ns, err) => this.opts.log.warn({ err, namespace: ns }, 'publishing the root CA ConfigMap failed; retrying') },
    );
  }

  private upToDate(cm: KObject | undefined): boolean {
    return !!cm && isDeepStrictEqual(cm.data ?? {}, { [ROOT_CA_KEY]: this.opts.caPem }) && cm.binaryData === undefined && !!cm.metadata.annotations?.[DESCRIPTION_ANNOTATION];
  }

  private type(resource: string): ResourceType {
    const t = this.registry.lookup('', 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }

  /** Creates or repairs the namespace's root CA ConfigMap; nothing for a namespace that is absent or terminating. */
  async sync(namespace: string): Promise<void> {
    const data = { [ROOT_CA_KEY]: this.opts.caPem };
    try {
      const ns = await this.store.get(this.type('namespaces'), '', namespace);
      if (ns.metadata.deletionTimestamp) return;
      await this.store.update(
        this.type('configmaps'),
        namespace,
        ROOT_CA_CONFIGMAP,
        (current): KObject => {
          if (!current) {
            return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data };
          }
          if (this.upToDate(current)) return current;
          const next: KObject = { ...current, metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data };
          delete next.binaryData;
          return next;
        },
        ctx,
        true,
      );
    } catch (err) {
      // Absent namespace; or one that started terminating between the read and the write.
      if (isNotFound(err) || isConflict(err) || isAlreadyExists(err) || (err instanceof ApiError && err.code === 403)) return;
      throw err;
    }
  }
}
