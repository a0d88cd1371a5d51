import { randomUUID, randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ApiError, errors, fieldError, type Cause } from '../api/errors';
import { matches, type Selector } from '../api/selectors';
import type { KList, KObject } from '../api/types';
import type { AdmissionChain, Operation } from '../admission/admission';
import type { UserInfo } from '../authn/user';
import { validateMetaUpdate, validateObjectMeta } from '../registry/meta-validation';
import { nameRuleFor } from '../registry/name-rules';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { StorageError, type KeyValue, type Storage } from '../storage/storage';
import { validateAgainstSchema } from '../validation/validate-schema';
import { encodeContinue } from './continue-token';
import { collectionPrefix, objectKey } from './keys';
import { managerFromUserAgent, updateManagedFields } from './managed-fields';
import { parseRv, planList, type ListParams } from './read-plan';
import { CorruptObjectError, decodeObject, tooOld, type WatchCache } from './watch-cache';

/** Who writes and how (4.4 write options). */
export interface WriteContext {
  user: UserInfo;
  dryRun: boolean;
  fieldManager?: string;
  userAgent?: string;
  subresource: string;
}

export interface ListQuery extends ListParams {
  labelSelector: Selector;
  fieldSelector: Selector;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** ignoreStoreReadErrorWithClusterBreakingPotential (2.5), validated by the handler. */
  unsafeIgnoreReadError?: boolean;
}

export interface ObjectStoreOptions {
  now: () => Date;
  /** How long a "not older than" read waits for a future revision before 504. */
  rvWaitMs: number;
}

/** Names made from generateName: the prefix plus five characters, as upstream's SimpleNameGenerator. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_CONFLICT_RETRIES = 8;

/**
 * The generic REST store (upstream's genericregistry.Store): object lifecycle over the Storage
 * interface for every resource type — metadata, defaulting, validation, admission, optimistic
 * concurrency, status sub-resources, finalizers and graceful deletion. Handlers call it; it never
 * sees HTTP.
 */
export class ObjectStore {
  constructor(
    private readonly storage: Storage,
    private readonly cache: WatchCache,
    private readonly admission: AdmissionChain,
    private readonly opts: ObjectStoreOptions,
  ) {}

  /** Reads one object (4.6 get: unset = latest, 0 = any, n = not older than n). */
  async get(t: ResourceType, namespace: string, name: string, resourceVersion?: string): Promise<KObject> {
    if (resourceVersion && resourceVersion !== '0') {
      await this.cache.waitForRevision(parseRv(resourceVersion), this.opts.rvWaitMs);
    }
    const kv = await this.storage.get(objectKey(t, namespace, name));
    if (!kv) throw errors.notFound(t.resource, name, t.group);
    return this.decode(t, kv);
  }

  /** Lists with selectors and chunking (2.3, 4.6, 4.7). */
  async list(t: ResourceType, namespace: string, q: ListQuery): Promise<KList> {
    const plan = planList(q);
    let revision = 0;
    let startAfter: string | undefined;
    if (plan.mode === 'exact') revision = plan.revision;
    if (plan.mode === 'continue') {
      revision = plan.token.revision;
      startAfter = plan.token.startAfter;
    }
    if (plan.mode === 'notOlderThan') await this.cache.waitForRevision(plan.revision, this.opts.rvWaitMs);
    const limit = q.limit && q.limit > 0 ? q.limit : 0;
    const filtering = q.labelSelector.length > 0 || q.fieldSelector.length > 0;
    const prefix = collectionPrefix(t, namespace);
    const items: KObject[] = [];
    const corrupt: string[] = [];
    let remaining: number;
    let lastKey: string | undefined;
    let more = false;
    // With selectors, keep reading pages until the limit is filled, as upstream does.
    for (;;) {
      const want = limit ? limit - items.length : 0;
      let res;
      try {
        res = await this.storage.list(prefix, {
          limit: limit ? (filtering ? Math.max(want, 100) : want) : 0,
          startAfter,
          revision,
        });
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Compacted') {
          if (plan.mode === 'continue') {
            throw new ApiError(
              'Expired',
              'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
            );
          }
          throw tooOld(revision);
        }
        if (err instanceof StorageError && err.code === 'FutureRevision') {
          throw new ApiError('Timeout', `Too large resource version: ${revision}`, { retryAfterSeconds: 1 });
        }
        throw err;
      }
      revision = res.revision;
      let i = 0;
      for (; i < res.items.length; i++) {
        const kv = res.items[i];
        lastKey = kv.key;
        let obj: KObject;
        try {
          obj = this.decode(t, kv);
        } catch (err) {
          // Keep reading so the error names every undecodable object of the list, not just the first.
          if (!(err instanceof ApiError) || err.code !== 500) throw err;
          corrupt.push(err.message.replace(/^Internal error occurred: failed to decode the stored object /, ''));
          continue;
        }
        if (!filtering || this.selects(t, obj, q)) items.push(obj);
        if (limit && items.length >= limit) {
          i++;
          break;
        }
      }
      const leftInPage = res.items.length - i;
      remaining = res.remaining + leftInPage;
      if (limit && items.length >= limit) {
        more = remaining > 0;
        break;
      }
      if (res.remaining === 0 || !limit) break;
      startAfter = lastKey;
    }
    if (corrupt.length > 0) throw errors.internal(`failed to decode ${corrupt.length} stored object(s): ${corrupt.join('; ')}`);
    const list: KList = {
      apiVersion: apiVersionOf(t),
      kind: t.listKind,
      metadata: { resourceVersion: String(revision) },
      items,
    };
    if (more && lastKey) {
      list.metadata.continue = encodeContinue({ revision, startAfter: lastKey });
      // 2.3: omitted when a selector is used (the count would be of unfiltered keys).
      if (!filtering) list.metadata.remainingItemCount = remaining;
    }
    return list;
  }

  /** True when the object passes the query's label and field selectors. */
  selects(t: ResourceType, obj: KObject, q: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): boolean {
    const labels = obj.metadata.labels ?? {};
    if (!matches(q.labelSelector, (k) => labels[k])) return false;
    return matches(q.fieldSelector, (k) => fieldValue(t, obj, k));
  }

  /** Creates an object (POST). Returns what was stored, or what would be with dryRun. */
  async create(t: ResourceType, namespace: string, input: KObject, ctx: WriteContext): Promise<KObject> {
    const obj = structuredClone(input);
    this.checkScope(t, namespace, obj);
    const meta = obj.metadata;
    if (meta.resourceVersion) {
      throw new ApiError('BadRequest', 'resourceVersion should not be set on objects to be created');
    }
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    const now = this.opts.now();
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(now);
    meta.generation = 1;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (t.hasStatus && !t.keepStatusOnCreate) delete obj.status;
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    t.defaults?.(obj);
    await this.admission.admit(this.attrs('CREATE', t, namespace, meta.name ?? '', ctx, obj));
    this.validate(t, obj);
    meta.managedFields = updateManagedFields(null, obj, this.manager(t, ctx, now));
    if (meta.managedFields.length === 0) delete meta.managedFields;
    if (ctx.dryRun) return obj;
    try {
      const kv = await this.storage.create(objectKey(t, namespace, meta.name!), encode(obj));
      return this.decode(t, kv);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'AlreadyExists') throw errors.alreadyExists(t.resource, meta.name!, t.group);
      throw err;
    }
  }

  /**
   * Replaces an object (PUT, or the result of a patch). `compute` gets the current object and
   * returns the desired one; it runs again if a concurrent write wins, unless the desired object
   * pins a resourceVersion (then 409). Creates when absent if allowCreate.
   */
  async update(
    t: ResourceType,
    namespace: string,
    name: string,
    compute: (current: KObject | null) => KObject | Promise<KObject>,
    ctx: WriteContext,
    allowCreate = false,
  ): Promise<{ object: KObject; created: boolean }> {
    const key = objectKey(t, namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = await this.storage.get(key);
      if (!kv) {
        if (!allowCreate) throw errors.notFound(t.resource, name, t.group);
        const desired = await compute(null);
        if (desired.metadata.name && desired.metadata.name !== name) throw nameMismatch(desired.metadata.name, name);
        desired.metadata.name = name;
        delete desired.metadata.resourceVersion;
        return { object: await this.create(t, namespace, desired, ctx), created: true };
      }
      const current = this.decode(t, kv);
      const desired = structuredClone(await compute(structuredClone(current)));
      try {
        const object = await this.replace(t, namespace, name, current, kv, desired, ctx);
        return { object, created: false };
      } catch (err) {
        const pinned = desired.metadata.resourceVersion !== undefined && desired.metadata.resourceVersion !== '';
        if (err instanceof StorageError && err.code === 'Conflict') {
          if (pinned || attempt >= MAX_CONFLICT_RETRIES) throw modified(t, name);
          continue;
        }
        if (err instanceof StorageError && err.code === 'NotFound') throw errors.notFound(t.resource, name, t.group);
        throw err;
      }
    }
  }

  private async replace(
    t: ResourceType,
    namespace: string,
    name: string,
    current: KObject,
    kv: KeyValue,
    obj: KObject,
    ctx: WriteContext,
  ): Promise<KObject> {
    if (typeof obj.metadata !== 'object' || obj.metadata === null) throw errors.badRequest('metadata: Required value');
    if (obj.metadata.name !== undefined && obj.metadata.name !== name) throw nameMismatch(obj.metadata.name, name);
    obj.metadata.name = name;
    this.checkScope(t, namespace, obj);
    const rv = obj.metadata.resourceVersion;
    // Upstream allows unconditional updates for built-in types: an empty resourceVersion means "whatever is there".
    if (rv && rv !== current.metadata.resourceVersion) throw modified(t, name);
    if (obj.metadata.uid && obj.metadata.uid !== current.metadata.uid) {
      throw new ApiError('Conflict', `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${current.metadata.uid}`);
    }
    const meta = obj.metadata;
    const old = current.metadata;
    // System-owned metadata always comes from the stored object.
    meta.uid = old.uid;
    meta.creationTimestamp = old.creationTimestamp;
    meta.deletionTimestamp = old.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp === undefined) delete meta.deletionTimestamp;
    if (meta.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    if (meta.generateName === undefined && old.generateName !== undefined) meta.generateName = old.generateName;
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    const writes = ctx.subresource === 'status' ? 'status' : ctx.subresource ? t.subresourceWrites?.[ctx.subresource] : undefined;
    if (writes === 'status') {
      // A status-like sub-resource changes status (and labels/annotations), never the spec.
      for (const k of Object.keys(obj)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') delete obj[k];
      for (const [k, v] of Object.entries(current)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') obj[k] = v;
      meta.finalizers = old.finalizers;
      meta.ownerReferences = old.ownerReferences;
      if (meta.finalizers === undefined) delete meta.finalizers;
      if (meta.ownerReferences === undefined) delete meta.ownerReferences;
    } else if (t.hasStatus && writes !== 'whole') {
      // The main resource ignores status changes.
      if (current.status === undefined) delete obj.status;
      else obj.status = current.status;
    }
    // Removing a finalizer from a terminating object is allowed; adding one is not (as upstream).
    if (old.deletionTimestamp) {
      const added = (meta.finalizers ?? []).filter((f) => !(old.finalizers ?? []).includes(f));
      if (added.length > 0) {
        throw errors.invalid(t.kind, name, [fieldError('metadata.finalizers', `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`, 'FieldValueForbidden')], t.group);
      }
    }
    t.defaults?.(obj);
    await this.admission.admit(this.attrs('UPDATE', t, namespace, name, ctx, obj, current));
    // validateUpdate restores fields that may not change, so generation is judged after it.
    this.validate(t, obj, current, ctx.subresource);
    meta.generation = old.generation ?? 1;
    if (specChanged(t, current, obj)) meta.generation++;
    const now = this.opts.now();
    meta.managedFields = updateManagedFields(current, obj, this.manager(t, ctx, now));
    if (meta.managedFields.length === 0) delete meta.managedFields;
    if (equalIgnoringTimes(current, obj)) return current; // no-op writes do not bump resourceVersion (upstream)
    if (ctx.dryRun) {
      obj.metadata.resourceVersion = current.metadata.resourceVersion;
      return obj;
    }
    // The last finalizer gone from a terminating object: the object is removed (3. States).
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && !(t.resource === 'namespaces')) {
      const gone = await this.storage.delete(objectKey(t, namespace, name), kv.modRevision);
      const out = this.decode(t, gone);
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: out.metadata.resourceVersion } };
    }
    const written = await this.storage.update(objectKey(t, namespace, name), encode(obj), kv.modRevision);
    return this.decode(t, written);
  }

  /**
   * Deletes an object (DELETE with DeleteOptions, 2.5). Returns the object and whether it is gone
   * (false while finalizers or a grace period keep it terminating).
   */
  async delete(
    t: ResourceType,
    namespace: string,
    name: string,
    options: DeleteOptions,
    ctx: WriteContext,
  ): Promise<{ object: KObject; gone: boolean }> {
    const key = objectKey(t, namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = await this.storage.get(key);
      if (!kv) throw errors.notFound(t.resource, name, t.group);
      const current = this.decode(t, kv);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw new ApiError('Conflict', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw new ApiError('Conflict', `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
      }
      await this.admission.admit(this.attrs('DELETE', t, namespace, name, ctx, undefined, current));
      const next = structuredClone(current);
      const meta = next.metadata;
      const policy = options.propagationPolicy ?? (options.orphanDependents ? 'Orphan' : options.orphanDependents === false ? 'Background' : undefined);
      const finalizers = new Set(meta.finalizers ?? []);
      if (policy === 'Orphan') finalizers.add('orphan');
      if (policy === 'Foreground') finalizers.add('foregroundDeletion');
      if (policy === 'Background') {
        finalizers.delete('orphan');
        finalizers.delete('foregroundDeletion');
      }
      const grace = gracePeriod(t, current, options);
      // Namespaces terminate through their spec.finalizers (the namespace controller empties them).
      const nsFinalizing = t.resource === 'namespaces' && ((current.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).length > 0;
      const keep = finalizers.size > 0 || grace > 0 || nsFinalizing;
      if (!keep) {
        if (ctx.dryRun) return { object: current, gone: true };
        try {
          const gone = await this.storage.delete(key, kv.modRevision);
          return { object: this.decode(t, gone), gone: true };
        } catch (err) {
          if (err instanceof StorageError && err.code === 'Conflict' && attempt < MAX_CONFLICT_RETRIES) continue;
          if (err instanceof StorageError && err.code === 'NotFound') throw errors.notFound(t.resource, name, t.group);
          throw err;
        }
      }
      const now = this.opts.now();
      if (!meta.deletionTimestamp) {
        meta.deletionTimestamp = rfc3339(new Date(now.getTime() + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
      } else if (grace < (meta.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period on a repeated delete moves the deadline closer, never further.
        meta.deletionTimestamp = rfc3339(new Date(now.getTime() + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
      }
      if (finalizers.size > 0) meta.finalizers = [...finalizers];
      else delete meta.finalizers;
      if (t.resource === 'namespaces') {
        (next.status as Record<string, unknown> | undefined) ??= {};
        (next.status as Record<string, unknown>).phase = 'Terminating';
      }
      if (isDeepStrictEqual(next, current)) return { object: current, gone: false };
      delete meta.resourceVersion;
      if (ctx.dryRun) return { object: next, gone: false };
      try {
        const written = await this.storage.update(key, encode(next), kv.modRevision);
        return { object: this.decode(t, written), gone: false };
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict' && attempt < MAX_CONFLICT_RETRIES) continue;
        throw err;
      }
    }
  }

  /** Removes an object from storage now, whatever its finalizers (for controllers that finished them). */
  async remove(t: ResourceType, namespace: string, name: string, expectedResourceVersion?: string): Promise<void> {
    try {
      await this.storage.delete(objectKey(t, namespace, name), expectedResourceVersion ? Number(expectedResourceVersion) : undefined);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NotFound') return;
      if (err instanceof StorageError && err.code === 'Conflict') throw modified(t, name);
      throw err;
    }
  }

  /** The stored object; a value that cannot be decoded is a 500 naming its key (spec 2.5: the read error is reported). */
  private decode(t: ResourceType, kv: KeyValue): KObject {
    let obj: KObject;
    try {
      obj = decodeObject(kv.value, kv.modRevision);
    } catch (err) {
      if (!(err instanceof CorruptObjectError)) throw err;
      throw errors.internal(`failed to decode the stored object ${kv.key} at revision ${kv.modRevision}: ${err.message}`);
    }
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    return obj;
  }

  private checkScope(t: ResourceType, namespace: string, obj: KObject): void {
    if (typeof obj.metadata !== 'object' || obj.metadata === null || Array.isArray(obj.metadata)) throw errors.invalid(t.kind, '', [fieldError('metadata', 'Required value', 'FieldValueRequired')], t.group);
    if (t.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      obj.metadata.namespace = namespace;
    } else {
      delete obj.metadata.namespace;
    }
  }

  private validate(t: ResourceType, obj: KObject, old?: KObject, subresource = ''): void {
    const causes: Cause[] = [];
    causes.push(...validateAgainstSchema(obj, t.schema));
    causes.push(...validateObjectMeta(obj.metadata, { namespaced: t.namespaced, nameRule: nameRuleFor(t) }));
    if (old) causes.push(...validateMetaUpdate(obj.metadata, old.metadata));
    if (causes.length === 0 && t.validate) causes.push(...t.validate(obj, old, subresource));
    if (causes.length === 0 && old && t.validateUpdate) causes.push(...t.validateUpdate(obj, old, subresource));
    if (causes.length > 0) throw errors.invalid(t.kind, obj.metadata.name ?? obj.metadata.generateName ?? '', causes, t.group);
  }

  private manager(t: ResourceType, ctx: WriteContext, now: Date) {
    return {
      manager: ctx.fieldManager || managerFromUserAgent(ctx.userAgent),
      operation: 'Update' as const,
      apiVersion: apiVersionOf(t),
      time: rfc3339(now),
      subresource: ctx.subresource,
      schema: t.schema,
    };
  }

  private attrs(op: Operation, t: ResourceType, namespace: string, name: string, ctx: WriteContext, object?: KObject, oldObject?: KObject) {
    return { operation: op, type: t, namespace, name, subresource: ctx.subresource, object, oldObject, user: ctx.user, dryRun: ctx.dryRun };
  }
}

/** Value of a selectable field as a string (metadata.name, metadata.namespace, then the type's own). */
export function fieldValue(t: ResourceType, obj: KObject, key: string): string | undefined {
  if (key === 'metadata.name') return obj.metadata.name ?? '';
  if (key === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return t.fieldSelectors?.[key]?.(obj) ?? '';
}

export function selectableFields(t: ResourceType): Set<string> {
  const s = new Set(['metadata.name', 'metadata.namespace']);
  for (const k of Object.keys(t.fieldSelectors ?? {})) s.add(k);
  return s;
}

function gracePeriod(t: ResourceType, obj: KObject, options: DeleteOptions): number {
  if (options.gracePeriodSeconds !== undefined) return Math.max(0, options.gracePeriodSeconds);
  if (t.resource !== 'pods' || t.group !== '') return 0;
  // As upstream's pod strategy: unscheduled or finished pods go at once; others get their spec's grace period.
  const spec = (obj.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = (obj.status as { phase?: string } | undefined)?.phase;
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  return spec.terminationGracePeriodSeconds ?? 30;
}

function specChanged(t: ResourceType, a: KObject, b: KObject): boolean {
  const fields = t.specFields ?? [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !['metadata', 'status', 'apiVersion', 'kind'].includes(k));
  return fields.some((f) => !isDeepStrictEqual(a[f], b[f]));
}

function equalIgnoringTimes(a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: undefined, managedFields: (o.metadata.managedFields ?? []).map((m) => ({ ...m, time: undefined })) },
  });
  return isDeepStrictEqual(JSON.parse(JSON.stringify(strip(a))), JSON.parse(JSON.stringify(strip(b))));
}

function encode(obj: KObject): Buffer {
  const meta = { ...obj.metadata };
  delete meta.resourceVersion;
  return Buffer.from(JSON.stringify({ ...obj, metadata: meta }));
}

function generateName(prefix: string): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  // Upstream trims the prefix so that the whole name stays within 63 characters.
  return prefix.slice(0, 58) + s;
}

function modified(t: ResourceType, name: string): ApiError {
  return errors.conflict(t.resource, name, 'the object has been modified; please apply your changes to the latest version and try again', t.group);
}

function nameMismatch(bodyName: string, urlName: string): ApiError {
  return errors.badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${urlName})`);
}

/** Go's RFC 3339 form without fractional seconds, as metav1.Time marshals. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
