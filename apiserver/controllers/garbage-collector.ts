import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ApiError, isNotFound } from '../api/errors';
import type { KObject, OwnerReference } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { typePrefix } from '../store/keys';
import { StoreInformers, typedHandler, waitForCacheSync, type InformerView } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('garbage-collector');

/**
 * What the collector keeps of every object: its identity and ownership, as upstream's collector
 * follows metadata-only informers (here trimmed further: no labels, annotations or managedFields).
 */
const OWNERSHIP_VIEW: InformerView = {
  name: 'ownership',
  transform: (o) => {
    const m = o.metadata;
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
        ...(m.finalizers ? { finalizers: m.finalizers } : {}),
        ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      },
    };
  },
};

interface Ref {
  type: ResourceType;
  namespace: string;
  name: string;
}

/**
 * Owner-reference garbage collection (delete propagationPolicy, 2.5): dependents whose owners are
 * all gone are deleted (Background); an owner deleted with Orphan has its dependents' references
 * removed, then its "orphan" finalizer; one deleted with Foreground waits for its dependents to
 * be deleted, then loses its "foregroundDeletion" finalizer. An in-memory index from owner uid to
 * dependents is kept current from one informer per type (ownership only).
 */
export class GarbageCollector {
  private readonly dependents = new Map<string, Map<string, Ref>>();
  /** uid of every live object we know, to tell whether an owner still exists. */
  private readonly live = new Map<string, Ref>();
  private queue = new WorkQueue();
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
    /** The process's shared informers; default a factory of its own over store and cache. */
    informers?: StoreInformers,
  ) {
    this.informers = informers ?? new StoreInformers(store, cache, { log });
  }

  async run(signal: AbortSignal): Promise<void> {
    this.queue = new WorkQueue();
    const handler = { upsert: (t: ResourceType, obj: KObject, old?: KObject) => this.onUpsert(t, obj, old), remove: (_t: ResourceType, obj: KObject) => this.onRemove(obj) };
    // One informer per stored resource: the versions of a resource share their keys, and a type
    // served from another's storage (storedAs) is that resource's objects again.
    const resources = new Map(this.registry.all().filter((t) => !t.storedAs).map((t) => [typePrefix(t), t]));
    const follow = (t: ResourceType) => {
      const inf = this.informers.informer(t, { view: OWNERSHIP_VIEW });
      inf.addEventHandler(typedHandler(t, handler), { signal });
      return inf;
    };
    const informers = [...resources.values()].map(follow);
    // Custom resources come with their CRDs: each new stored resource is followed from then on.
    this.registry.subscribe(
      {
        added: (t) => {
          if (t.storedAs || resources.has(typePrefix(t))) return;
          resources.set(typePrefix(t), t);
          follow(t);
        },
      },
      signal,
    );
    this.informers.start(signal);
    // Work starts only once every owner is indexed, so no dependent is judged an orphan too early.
    if (!(await waitForCacheSync(signal, ...informers))) return;
    await runWorkers(this.queue, (k) => this.sync(k), signal, { onError: (k, err) => this.log.warn({ err, object: k }, 'garbage collection failed; retrying') });
  }

  private onRemove(obj: KObject): void {
    const uid = obj.metadata.uid!;
    this.live.delete(uid);
    this.unindex(obj);
    // Its dependents may now be orphans.
    for (const ref of this.dependents.get(uid)?.values() ?? []) this.enqueue(ref);
  }

  private onUpsert(t: ResourceType, obj: KObject, old?: KObject): void {
    if (old) this.unindex(old);
    this.observe(t, obj);
    if (needsWork(obj)) this.enqueue({ type: t, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! });
  }

  private observe(t: ResourceType, obj: KObject): void {
    const ref = { type: t, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name! };
    this.live.set(obj.metadata.uid!, ref);
    for (const o of obj.metadata.ownerReferences ?? []) {
      let m = this.dependents.get(o.uid);
      if (!m) this.dependents.set(o.uid, (m = new Map<string, Ref>()));
      m.set(refKey(ref), ref);
    }
  }

  private unindex(obj: KObject): void {
    for (const o of obj.metadata.ownerReferences ?? []) {
      const m = this.dependents.get(o.uid);
      if (!m) continue;
      for (const [k, r] of m) if (r.name === obj.metadata.name && r.namespace === (obj.metadata.namespace ?? '')) m.delete(k);
      if (m.size === 0) this.dependents.delete(o.uid);
    }
  }

  private enqueue(ref: Ref): void {
    this.queue.add(JSON.stringify([ref.type.group, ref.type.version, ref.type.resource, ref.namespace, ref.name]));
  }

  private async sync(key: string): Promise<void> {
    const [group, version, resource, namespace, name] = JSON.parse(key) as string[];
    const t = this.registry.lookup(group, version, resource);
    if (!t) return;
    let obj: KObject;
    try {
      obj = await this.store.get(t, namespace, name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const fin = obj.metadata.finalizers ?? [];
    if (obj.metadata.deletionTimestamp && fin.includes('orphan')) return this.orphanDependents(t, obj);
    if (obj.metadata.deletionTimestamp && fin.includes('foregroundDeletion')) return this.deleteDependentsFirst(t, obj);
    const owners = obj.metadata.ownerReferences ?? [];
    if (owners.length > 0 && owners.every((o) => !this.ownerExists(o, namespace))) {
      await this.deleteQuietly(t, namespace, name, 'Background');
      this.log.info({ resource: t.resource, namespace, name }, 'deleted dependent whose owners are gone');
    }
  }

  private ownerExists(o: OwnerReference, namespace: string): boolean {
    const ref = this.live.get(o.uid);
    if (!ref) return false;
    // A namespaced dependent may only be owned by objects of its namespace or cluster-scoped ones.
    return ref.namespace === '' || ref.namespace === namespace;
  }

  private async orphanDependents(t: ResourceType, owner: KObject): Promise<void> {
    const uid = owner.metadata.uid!;
    for (const ref of [...(this.dependents.get(uid)?.values() ?? [])]) {
      await this.store.update(ref.type, ref.namespace, ref.name, (cur) => {
        if (!cur) throw new ApiError('NotFound', 'gone');
        cur.metadata.ownerReferences = (cur.metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
        if (cur.metadata.ownerReferences.length === 0) delete cur.metadata.ownerReferences;
        delete cur.metadata.resourceVersion;
        return cur;
      }, ctx).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    }
    await this.removeFinalizer(t, owner, 'orphan');
  }

  private async deleteDependentsFirst(t: ResourceType, owner: KObject): Promise<void> {
    const deps = [...(this.dependents.get(owner.metadata.uid!)?.values() ?? [])];
    if (deps.length > 0) {
      for (const ref of deps) await this.deleteQuietly(ref.type, ref.namespace, ref.name, 'Foreground');
      this.enqueue({ type: t, namespace: owner.metadata.namespace ?? '', name: owner.metadata.name! });
      return;
    }
    await this.removeFinalizer(t, owner, 'foregroundDeletion');
  }

  private async removeFinalizer(t: ResourceType, obj: KObject, finalizer: string): Promise<void> {
    await this.store.update(t, obj.metadata.namespace ?? '', obj.metadata.name!, (cur) => {
      if (!cur) throw new ApiError('NotFound', 'gone');
      cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      delete cur.metadata.resourceVersion;
      return cur;
    }, ctx).catch((err) => {
      if (!isNotFound(err)) throw err;
    });
  }

  private async deleteQuietly(t: ResourceType, namespace: string, name: string, policy: 'Background' | 'Foreground'): Promise<void> {
    try {
      await this.store.delete(t, namespace, name, { propagationPolicy: policy }, ctx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** Only objects with owners, or owners deleted with Orphan or Foreground, need the collector. */
function needsWork(obj: KObject): boolean {
  if ((obj.metadata.ownerReferences ?? []).length > 0) return true;
  const fin = obj.metadata.finalizers ?? [];
  return !!obj.metadata.deletionTimestamp && (fin.includes('orphan') || fin.includes('foregroundDeletion'));
}

function refKey(r: Ref): string {
  return `${r.type.group}/${r.type.resource}/${r.namespace}/${r.name}`;
}
