/**
 * The objects the stream handlers read on every request (pods/exec, attach, portforward and log
 * read the pod, then its node), kept decoded by store key and revision. Each request still reads
 * the latest version from storage, as upstream's handlers do (a cache could send a stream to a
 * just-recreated pod's old node); only a version already decoded is not decoded again: parsing a
 * pod and a node is about 80 µs of each exec's CPU on the API server here. The kept objects are
 * shared by every request that reads the same version, which must not change them.
 */
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';

/** Versions kept: 128 pods and nodes, a few hundred KiB. */
const DEFAULT_KEPT = 128;

export class DecodedVersions {
  private readonly kept = new Map<string, { revision: number; obj: KObject }>();

  constructor(private readonly max = DEFAULT_KEPT) {}

  /** The object as store.get reads it (404 and other errors alike), shared and read-only. */
  async get(store: ObjectStore, t: ResourceType, namespace: string, name: string): Promise<Readonly<KObject>> {
    let missed: string | undefined;
    const obj = await store.get(t, namespace, name, undefined, (key, revision) => {
      const known = this.kept.get(key);
      if (known?.revision === revision) return known.obj;
      missed = key;
      return undefined;
    });
    if (missed !== undefined) {
      this.kept.delete(missed);
      this.kept.set(missed, { revision: Number(obj.metadata.resourceVersion), obj });
      if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value as string);
    }
    return obj;
  }
}
