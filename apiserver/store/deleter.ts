import { isDeepStrictEqual } from 'node:util';
import { ApiError, errors, fieldError, isNotFound } from '../api/errors';
import { MAX_DURATION_SECONDS } from '../api/integers';
import type { KList, KObject, ObjectMeta } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { StorageError, type Storage } from '../storage/storage';
import { objectKey } from './keys';
import type { ListQuery } from './list-reader';
import { decodeRaw, decodeServed, encodeServed, MAX_CONFLICT_RETRIES, modified, uidPreconditionFailed } from './stored-object';
import { rfc3339 } from '../api/time';
import type { WriteAdmission } from './write-admission';
import { writeAttributes, type WriteContext } from './write-context';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** ignoreStoreReadErrorWithClusterBreakingPotential (2.5), validated by the handler. */
  unsafeIgnoreReadError?: boolean;
}

/** The object a delete answers with, and whether it is gone (false while finalizers or a grace period keep it terminating). */
export interface DeleteResult {
  object: KObject;
  gone: boolean;
}

/** What deleting a collection needs: the list of what the selectors match, read as ObjectStore.list reads it. */
export interface CollectionLister {
  list(t: ResourceType, namespace: string, q: ListQuery): Promise<KList>;
}

/** The object one delete attempt works on: its type, name, storage key and the revision it was read at. */
interface Target {
  t: ResourceType;
  name: string;
  key: string;
  rev: number;
}

/** What the Deleter is wired with: storage writes, the admission chain (DELETE), the collection reader and the clock. */
export interface DeleterDeps {
  storage: Pick<Storage, 'get' | 'update' | 'delete'>;
  admission: WriteAdmission;
  lister: CollectionLister;
  now: () => Date;
}

/**
 * Deletion (2.5 DeleteOptions; 3. States): preconditions, propagation finalizers, graceful
 * deletion with deletionTimestamp, finalizers holding a terminating object, the removal of an
 * object whose last finalizer an update took off, delete-collection, and the unconditional
 * removal controllers use. Upstream's Store.Delete/DeleteCollection with the type's
 * DeletionStrategy; kinds are never named here.
 */
export class Deleter {
  constructor(private readonly deps: DeleterDeps) {}

  /** Deletes an object (DELETE with DeleteOptions). */
  async delete(t: ResourceType, namespace: string, name: string, options: DeleteOptions, ctx: WriteContext): Promise<DeleteResult> {
    const key = objectKey(t, namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = await this.deps.storage.get(key);
      if (!kv) throw errors.notFound(t.resource, name, t.group);
      const current = await decodeServed(t, kv);
      checkPreconditions(current, options.preconditions);
      await this.deps.admission.admit(writeAttributes('DELETE', t, namespace, name, ctx, undefined, current));
      const done = await this.deleteOnce({ t, name, key, rev: kv.modRevision }, current, options, ctx, attempt < MAX_CONFLICT_RETRIES);
      if (done) return done;
    }
  }

  /** DELETE collection: deletes every object the selectors match, with the same options each; answers the list of what it deleted. */
  async deleteCollection(t: ResourceType, namespace: string, q: ListQuery, options: DeleteOptions, ctx: WriteContext): Promise<KList> {
    const list = await this.deps.lister.list(t, namespace, { ...q, limit: undefined, continue: undefined });
    const items: KObject[] = [];
    for (const obj of list.items) {
      try {
        const { object } = await this.delete(t, obj.metadata.namespace ?? '', obj.metadata.name!, options, ctx);
        items.push(object);
      } catch (err) {
        // Deleted by someone else meanwhile: that is what was asked for.
        if (!isNotFound(err)) throw err;
      }
    }
    return { apiVersion: list.apiVersion, kind: list.kind, metadata: { resourceVersion: list.metadata.resourceVersion }, items };
  }

  /** Removes an object from storage now, whatever its finalizers (for controllers that finished them). */
  async remove(t: ResourceType, namespace: string, name: string, expectedResourceVersion?: string): Promise<void> {
    try {
      await this.deps.storage.delete(objectKey(t, namespace, name), expectedResourceVersion ? Number(expectedResourceVersion) : undefined);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NotFound') return;
      if (err instanceof StorageError && err.code === 'Conflict') throw modified(t, name);
      throw err;
    }
  }

  /**
   * For an update about to store obj over the revision expectedRevision: when the update took the
   * last finalizer off a terminating object, removes it instead (3. States) and answers obj with the
   * deletion's resourceVersion; undefined when the object stays. Storage errors (Conflict, NotFound)
   * reach the caller, whose retry loop handles them as for the update itself.
   */
  async deleteIfFinalized(t: ResourceType, key: string, obj: KObject, expectedRevision: number): Promise<KObject | undefined> {
    const meta = obj.metadata;
    if (!meta.deletionTimestamp || (meta.finalizers ?? []).length > 0) return undefined;
    if (t.deletion?.deleteWhenFinalized?.(obj) === false) return undefined;
    const gone = await this.deps.storage.delete(key, expectedRevision);
    // Only the deletion's revision is read: no conversion needed.
    const out = decodeRaw(gone);
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: out.metadata.resourceVersion } };
  }

  /** One attempt at a delete read at revision rev; undefined when a concurrent write won and it may be retried. */
  private async deleteOnce(at: Target, current: KObject, options: DeleteOptions, ctx: WriteContext, mayRetry: boolean): Promise<DeleteResult | undefined> {
    const { t, key, rev } = at;
    const finalizers = finalizersAfterDelete(current.metadata, options, t.deletion?.defaultPropagation?.policy);
    const grace = gracePeriod(t, current, options);
    const keep = finalizers.size > 0 || grace > 0 || (t.deletion?.holdsDeletion?.(current) ?? false);
    if (!keep) {
      if (ctx.dryRun) return { object: current, gone: true };
      try {
        const gone = await this.deps.storage.delete(key, rev);
        return { object: await decodeServed(t, gone), gone: true };
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict' && mayRetry) return undefined;
        if (err instanceof StorageError && err.code === 'NotFound') throw errors.notFound(t.resource, at.name, t.group);
        throw err;
      }
    }
    const next = terminating(t, current, finalizers, grace, this.deps.now());
    if (isDeepStrictEqual(next, current)) return { object: current, gone: false };
    delete next.metadata.resourceVersion;
    if (ctx.dryRun) return { object: next, gone: false };
    try {
      const written = await this.deps.storage.update(key, await encodeServed(t, next), rev);
      return { object: await decodeServed(t, written), gone: false };
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict' && mayRetry) return undefined;
      // Removed meanwhile (another deleter, a controller): what was asked for, answered as a delete of a missing object is.
      if (err instanceof StorageError && err.code === 'NotFound') throw errors.notFound(t.resource, at.name, t.group);
      throw err;
    }
  }
}

/** Removing a finalizer from a terminating object is allowed; adding one is not (as upstream). Throws 422. */
export function forbidNewFinalizers(t: ResourceType, name: string, old: ObjectMeta, next: ObjectMeta): void {
  if (!old.deletionTimestamp) return;
  const added = (next.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
  if (added.length > 0) {
    throw errors.invalid(t.kind, name, [fieldError('metadata.finalizers', `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, 'FieldValueForbidden')], t.group);
  }
}

function checkPreconditions(current: KObject, pre: DeleteOptions['preconditions']): void {
  if (pre?.uid && pre.uid !== current.metadata.uid) throw uidPreconditionFailed(pre.uid, current.metadata.uid);
  if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
    throw new ApiError('Conflict', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
  }
}

/** The object's finalizers once the propagation policy has added or dropped the garbage collector's own. */
function finalizersAfterDelete(meta: ObjectMeta, options: DeleteOptions, typeDefault?: DeleteOptions['propagationPolicy']): Set<string> {
  const policy = options.propagationPolicy ?? (options.orphanDependents ? 'Orphan' : options.orphanDependents === false ? 'Background' : typeDefault);
  const finalizers = new Set(meta.finalizers ?? []);
  if (policy === 'Orphan') finalizers.add('orphan');
  if (policy === 'Foreground') finalizers.add('foregroundDeletion');
  if (policy === 'Background') {
    finalizers.delete('orphan');
    finalizers.delete('foregroundDeletion');
  }
  return finalizers;
}

/**
 * The request's grace period, else the type's default (DeletionStrategy), else 0; within
 * ±MAX_DURATION_SECONDS, so the deadline stays a valid date (a pod's terminationGracePeriodSeconds
 * may be any int64 we store; upstream's Duration arithmetic would overflow past the same bound).
 */
function gracePeriod(t: ResourceType, obj: KObject, options: DeleteOptions): number {
  const grace = options.gracePeriodSeconds !== undefined ? Math.max(0, options.gracePeriodSeconds) : (t.deletion?.defaultGracePeriodSeconds?.(obj) ?? 0);
  return Math.min(Math.max(grace, -MAX_DURATION_SECONDS), MAX_DURATION_SECONDS);
}

/** The object as a delete that keeps it leaves it: deletionTimestamp and grace period set, finalizers updated, the type's mark. */
function terminating(t: ResourceType, current: KObject, finalizers: Set<string>, grace: number, now: Date): KObject {
  const next = structuredClone(current);
  const meta = next.metadata;
  // A shorter grace period on a repeated delete moves the deadline closer, never further.
  if (!meta.deletionTimestamp || grace < (meta.deletionGracePeriodSeconds ?? 0)) {
    meta.deletionTimestamp = rfc3339(new Date(now.getTime() + grace * 1000));
    meta.deletionGracePeriodSeconds = grace;
  }
  if (finalizers.size > 0) meta.finalizers = [...finalizers];
  else delete meta.finalizers;
  t.deletion?.markTerminating?.(next);
  return next;
}
