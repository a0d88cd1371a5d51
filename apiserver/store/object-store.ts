import { randomUUID, randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { jsonEqual } from '../api/json-equal';
import { ApiError, errors, fieldError } from '../api/errors';
import type { KList, KObject } from '../api/types';
import { validateMetaUpdate, validateObjectMeta } from '../registry/meta-validation';
import { nameRuleFor } from '../registry/name-rules';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { StorageError, type KeyValue, type Storage } from '../storage/storage';
import { validateAgainstSchema } from '../validation/validate-schema';
import { Deleter, forbidNewFinalizers, type DeleteOptions, type DeleteResult } from './deleter';
import { objectKey } from './keys';
import { ListReader, type ListQuery, type RevisionWaiter } from './list-reader';
import { applyConfiguration } from '../apply/field-manager';
import type { FieldSet } from '../apply/field-set';
import { bodyLimitBytes, measureJson } from '../patch/json-bounds';
import { managerOf, trackFields, trackScope } from './field-tracking';
import { parseRv } from './read-plan';
import { decodeServed, encodeServed, MAX_CONFLICT_RETRIES, modified, reuseOrDecode, uidPreconditionFailed, type StoredVersion } from './stored-object';
import { rfc3339 } from '../api/time';
import { afterAdmission, type WriteAdmission } from './write-admission';
import { isSchemaRule, validateObject, type DeclarativeValidationOptions } from './declarative-validation';
import { writeAttributes, type WriteContext } from './write-context';

// The store's public API, importable from here as before the split.
export type { DeleteOptions, DeleteResult } from './deleter';
export { fieldValue, selectableFields, type ListQuery } from './list-reader';
export type { WriteAdmission } from './write-admission';
export type { WriteContext } from './write-context';

/** How a server-side apply goes (ObjectStore.apply). */
export interface ApplyOptions {
  /** Take fields other managers own instead of answering 409 (?force=true). */
  force: boolean;
  /** Runs before an apply creates the object (the create permission); rejects to refuse. */
  beforeCreate?: () => Promise<void>;
  /** What of the applied object a sub-resource writes (pods/ephemeralcontainers: only its list). */
  keep?: (applied: KObject, current: KObject | null) => KObject;
  /** The only fields that sub-resource's applier owns (apply/updater.ts UpdateScope.only). */
  only?: FieldSet;
}

export interface ObjectStoreOptions {
  now: () => Date;
  /** How long a "not older than" read waits for a future revision before 504. */
  rvWaitMs: number;
  /** What lists read (ListFromCacheSnapshot's snapshots, which pass other reads to the store); default the storage. */
  lists?: Pick<Storage, 'list'>;
  /** The DeclarativeValidation gates and where mismatches go; absent: the schema's and the kind's validation as without the gate. */
  declarativeValidation?: DeclarativeValidationOptions;
}

/** Names made from generateName: the prefix plus five characters, as upstream's SimpleNameGenerator. */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The generic REST store (upstream's genericregistry.Store): object lifecycle over the Storage
 * interface for every resource type — metadata, defaulting, validation, admission, optimistic
 * concurrency, status sub-resources, dry-run and managedFields. Reading collections is the
 * ListReader's (list-reader.ts), deletion and finalizers the Deleter's (deleter.ts); kind-specific
 * behaviour comes from the ResourceType's hooks. Handlers call it; it never sees HTTP.
 */
export class ObjectStore {
  private readonly reader: ListReader;
  private readonly deleter: Deleter;

  constructor(
    private readonly storage: Storage,
    private readonly cache: RevisionWaiter,
    private readonly admission: WriteAdmission,
    private readonly opts: ObjectStoreOptions,
  ) {
    this.reader = new ListReader(opts.lists ?? storage, cache, opts.rvWaitMs);
    this.deleter = new Deleter({ storage, admission, lister: this.reader, now: opts.now });
  }

  /**
   * Reads one object (4.6 get: unset = latest, 0 = any, n = not older than n). With `stored`, the
   * caller's object for the version read is returned instead of the decoded one when it has one.
   */
  async get(t: ResourceType, namespace: string, name: string, resourceVersion?: string, stored?: StoredVersion): Promise<KObject> {
    if (resourceVersion && resourceVersion !== '0') {
      await this.cache.waitForRevision(parseRv(resourceVersion), this.opts.rvWaitMs);
    }
    const kv = await this.storage.get(objectKey(t, namespace, name));
    if (!kv) throw errors.notFound(t.resource, name, t.group);
    return t.converter ? decodeServed(t, kv) : reuseOrDecode(t, kv, stored);
  }

  /** Lists with selectors and chunking (2.3, 4.6, 4.7); see ListReader. */
  list(t: ResourceType, namespace: string, q: ListQuery): Promise<KList> {
    return this.reader.list(t, namespace, q);
  }

  /** True when the object passes the query's label and field selectors. */
  selects(t: ResourceType, obj: KObject, q: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): boolean {
    return this.reader.selects(t, obj, q);
  }

  /** Creates an object (POST). Returns what was stored, or what would be with dryRun. */
  async create(t: ResourceType, namespace: string, input: KObject, ctx: WriteContext): Promise<KObject> {
    const obj = structuredClone(input);
    checkScope(t, namespace, obj);
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
    // Ownership is of what the request wrote and its defaults, not of admission's changes (upstream tracks before admission).
    trackFields(t, null, obj, ctx, now);
    const attrs = writeAttributes('CREATE', t, namespace, meta.name ?? '', ctx, obj);
    await this.admission.admit(attrs);
    // A write refused from here on gives back what admission charged (Appendix B).
    return afterAdmission(attrs, async () => {
      validate(t, obj, undefined, '', this.opts.declarativeValidation);
      if (ctx.dryRun) return obj;
      try {
        const kv = await this.storage.create(objectKey(t, namespace, meta.name!), await encodeServed(t, obj));
        return await decodeServed(t, kv);
      } catch (err) {
        if (err instanceof StorageError && err.code === 'AlreadyExists') throw errors.alreadyExists(t.resource, meta.name!, t.group);
        throw err;
      }
    });
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
      const current = await decodeServed(t, kv);
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

  /**
   * Server-side apply (Appendix C): config merged onto the current object by the kind's schema,
   * field ownership tracked (apply/field-manager.ts; 409 on conflicts unless force). On the main
   * resource an absent object is created, after beforeCreate (its create permission); a
   * resourceVersion in config pins the write.
   */
  apply(t: ResourceType, namespace: string, name: string, config: KObject, ctx: WriteContext, opts: ApplyOptions): Promise<{ object: KObject; created: boolean }> {
    const compute = async (current: KObject | null) => {
      if (!current) {
        if (config.metadata.uid) throw errors.conflict(t.resource, name, `uid mismatch: the provided object specified uid ${config.metadata.uid}, and no existing object was found`, t.group);
        await opts.beforeCreate?.();
      }
      const object = applyConfiguration(current, config, managerOf(ctx), opts.force, { ...trackScope(t, ctx.subresource, this.opts.now()), only: opts.only });
      if (!config.metadata.resourceVersion) delete object.metadata.resourceVersion;
      // As a patched object (patch-by-format.ts): the live object and the configuration may each be near the body limit.
      if (measureJson(object, bodyLimitBytes).size > bodyLimitBytes) {
        throw new ApiError('RequestEntityTooLarge', `the applied object is larger than the limit of ${bodyLimitBytes} bytes`);
      }
      return opts.keep ? opts.keep(object, current) : object;
    };
    return this.update(t, namespace, name, compute, { ...ctx, applied: true }, !ctx.subresource);
  }

  /** Deletes an object (DELETE with DeleteOptions, 2.5); see Deleter. */
  delete(t: ResourceType, namespace: string, name: string, options: DeleteOptions, ctx: WriteContext): Promise<DeleteResult> {
    return this.deleter.delete(t, namespace, name, options, ctx);
  }

  /** Deletes every object the query's selectors match (DELETE collection); answers the list of what it deleted. */
  deleteCollection(t: ResourceType, namespace: string, q: ListQuery, options: DeleteOptions, ctx: WriteContext): Promise<KList> {
    return this.deleter.deleteCollection(t, namespace, q, options, ctx);
  }

  /** Removes an object from storage now, whatever its finalizers (for controllers that finished them). */
  remove(t: ResourceType, namespace: string, name: string, expectedResourceVersion?: string): Promise<void> {
    return this.deleter.remove(t, namespace, name, expectedResourceVersion);
  }

  /** One attempt at an update of `current` (read as kv) to `obj`; storage errors go to update's retry loop. */
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
    checkScope(t, namespace, obj);
    const rv = obj.metadata.resourceVersion;
    // Upstream allows unconditional updates for built-in types: an empty resourceVersion means "whatever is there".
    if (rv && rv !== current.metadata.resourceVersion) throw modified(t, name);
    if (obj.metadata.uid && obj.metadata.uid !== current.metadata.uid) throw uidPreconditionFailed(obj.metadata.uid, current.metadata.uid);
    const meta = obj.metadata;
    const old = current.metadata;
    keepSystemMeta(t, current, obj);
    keepOtherHalf(t, ctx.subresource, current, obj);
    forbidNewFinalizers(t, name, old, meta);
    t.defaults?.(obj);
    trackFields(t, current, obj, ctx, this.opts.now());
    const attrs = writeAttributes('UPDATE', t, namespace, name, ctx, obj, current);
    await this.admission.admit(attrs);
    // A write refused from here on (invalid, or a conflict update retries) gives back what admission charged.
    return afterAdmission(attrs, () => this.write(t, namespace, name, current, kv, obj, ctx));
  }

  /** The rest of replace once admitted: validation, generation, the storage write. */
  private async write(t: ResourceType, namespace: string, name: string, current: KObject, kv: KeyValue, obj: KObject, ctx: WriteContext): Promise<KObject> {
    const meta = obj.metadata;
    const old = current.metadata;
    // validateUpdate restores fields that may not change, so generation is judged after it.
    validate(t, obj, current, ctx.subresource, this.opts.declarativeValidation);
    meta.generation = old.generation ?? 1;
    if (specChanged(t, current, obj) || t.bumpsGeneration?.(obj, current, ctx.subresource)) meta.generation++;
    if (equalIgnoringTimes(current, obj)) return current; // no-op writes do not bump resourceVersion (upstream)
    if (ctx.dryRun) {
      obj.metadata.resourceVersion = current.metadata.resourceVersion;
      return obj;
    }
    const key = objectKey(t, namespace, name);
    const removed = await this.deleter.deleteIfFinalized(t, key, obj, kv.modRevision);
    if (removed) return removed;
    const written = await this.storage.update(key, await encodeServed(t, obj), kv.modRevision);
    return decodeServed(t, written);
  }
}

/** System-owned metadata always comes from the stored object. */
function keepSystemMeta(t: ResourceType, current: KObject, obj: KObject): void {
  const meta = obj.metadata;
  const old = current.metadata;
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
}

/**
 * Status sub-resources: a status-like write changes status (and labels/annotations), never the
 * spec, finalizers or owners; the main resource of a type with status ignores status changes.
 */
function keepOtherHalf(t: ResourceType, subresource: string, current: KObject, obj: KObject): void {
  const meta = obj.metadata;
  const old = current.metadata;
  const writes = subresource === 'status' ? 'status' : subresource ? t.subresourceWrites?.[subresource] : undefined;
  if (writes === 'status') {
    for (const k of Object.keys(obj)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') delete obj[k];
    for (const [k, v] of Object.entries(current)) if (k !== 'status' && k !== 'metadata' && k !== 'apiVersion' && k !== 'kind') obj[k] = v;
    meta.finalizers = old.finalizers;
    meta.ownerReferences = old.ownerReferences;
    if (meta.finalizers === undefined) delete meta.finalizers;
    if (meta.ownerReferences === undefined) delete meta.ownerReferences;
  } else if (t.hasStatus && writes !== 'whole') {
    if (current.status === undefined) delete obj.status;
    else obj.status = current.status;
  }
}

function checkScope(t: ResourceType, namespace: string, obj: KObject): void {
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

/** Schema, metadata and the kind's validation (with declarative validation beside it: declarative-validation.ts); throws 422 with every cause. */
function validate(t: ResourceType, obj: KObject, old: KObject | undefined, subresource: string, dv: DeclarativeValidationOptions | undefined): void {
  const schema = validateAgainstSchema(obj, t.schema);
  const meta = validateObjectMeta(obj.metadata, { namespaced: t.namespaced, nameRule: nameRuleFor(t), strictFinalizers: t.finalizerNames !== 'qualified' });
  if (old) meta.push(...validateMetaUpdate(obj.metadata, old.metadata));
  const handwritten = t.validate ? () => t.validate!(obj, old, subresource) : undefined;
  const declarative = () => schema.filter(isSchemaRule);
  let causes = validateObject({ kind: t.kind, schema, meta, declarative, handwritten, coverage: t.declarativeCoverage }, dv);
  if (causes.length === 0 && old && t.validateUpdate) causes = t.validateUpdate(obj, old, subresource);
  if (causes.length > 0) throw errors.invalid(t.kind, obj.metadata.name ?? obj.metadata.generateName ?? '', causes, t.group);
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
  return jsonEqual(strip(a), strip(b));
}

function generateName(prefix: string): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  // Upstream trims the prefix so that the whole name stays within 63 characters.
  return prefix.slice(0, 58) + s;
}

function nameMismatch(bodyName: string, urlName: string): ApiError {
  return errors.badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${urlName})`);
}
