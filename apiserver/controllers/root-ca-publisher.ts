import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { ROOT_CA_CONFIGMAP, ROOT_CA_KEY } from '../admission/service-account';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { typePrefix } from '../store/keys';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';
import { WorkQueue } from './work-queue';

const ctx = controllerContext('root-ca-cert-publisher');
const everything = { labelSelector: [], fieldSelector: [] };

/** Says what the ConfigMap is for (upstream sets the same text under kubernetes.io/description). */
export const DESCRIPTION_ANNOTATION = 'svc.io/description';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the svc-apiserver when using internal endpoints such as the internal service IP or svc.default.svc. No other usage is guaranteed across distributions of svc clusters.';

export interface RootCaPublisherOptions {
  /** The PEM bundle pods use to verify the API server (the cluster CA). */
  caPem: string;
  log: Logger;
}

/**
 * Upstream's root-ca-cert-publisher: every active namespace holds the ConfigMap kube-root-ca.crt
 * with key ca.crt = the cluster CA bundle, which the ServiceAccount admission plugin projects
 * into every pod's token volume. The ConfigMap is created with the namespace, recreated when
 * deleted and put back when its data or description is changed; other fields (labels, other
 * annotations) are left as users set them.
 */
export class RootCaPublisher {
  private readonly queue = new WorkQueue();

  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: RootCaPublisherOptions,
  ) {}

  /** Keeps the ConfigMaps until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await this.cache.whenReady();
    const from = this.cache.currentRevision();
    for (const ns of (await this.store.list(this.type('namespaces'), '', everything)).items) this.queue.add(ns.metadata.name!);
    void this.follow(from, signal);
    await this.queue.run(signal, (ns) => this.sync(ns), (ns, err) => this.opts.log.warn({ err, namespace: ns }, 'publishing the root CA ConfigMap failed; retrying'));
  }

  private async follow(from: number, signal: AbortSignal): Promise<void> {
    try {
      const nsPrefix = typePrefix(this.type('namespaces'));
      const cmPrefix = typePrefix(this.type('configmaps'));
      for await (const ev of this.cache.watch('/core/', from, signal)) {
        if (ev.key.startsWith(nsPrefix) && ev.type !== 'DELETED') this.queue.add(ev.object.metadata.name!);
        else if (ev.key.startsWith(cmPrefix) && ev.object.metadata.name === ROOT_CA_CONFIGMAP) this.queue.add(ev.object.metadata.namespace!);
      }
    } catch (err) {
      if (!signal.aborted) this.opts.log.error({ err }, 'root CA publisher watch ended');
    }
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
          if (isDeepStrictEqual(current.data ?? {}, data) && current.binaryData === undefined && current.metadata.annotations?.[DESCRIPTION_ANNOTATION]) return current;
          const next: KObject = { ...current, metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data };
          delete next.binaryData;
          return next;
        },
        ctx,
        true,
      );
    } catch (err) {
      // Absent namespace; or one that started terminating between the read and the write.
      if (err instanceof ApiError && (err.code === 404 || err.code === 403 || err.code === 409)) return;
      throw err;
    }
  }
}
