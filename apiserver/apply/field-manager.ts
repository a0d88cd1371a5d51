import { ApiError, errors } from '../api/errors';
import { jsonEqual } from '../api/json-equal';
import type { KObject, ManagedFieldsEntry } from '../api/types';
import { isObject } from '../api/types';
import { conflictError } from './conflicts';
import { has, type FieldSet } from './field-set';
import { allowedByLastApplied, rewriteLastApplied, UPGRADING_MANAGER } from './last-applied';
import { capUpdateManagers, copyManagers, decodeManagedFields, encodeManagedFields, managerId, ManagedFieldsError, type Manager, type Managers } from './managers';
import { dropZeroLeftovers, withoutManagedFields, zeroObject } from './scope';
import { fieldSetOf } from './to-field-set';
import { StructureError } from './typed';
import { applyOwnership, ApplyConflicts, tracked, updateOwnership, type UpdateScope } from './updater';
import { stripNulls } from './strip-nulls';

/**
 * metadata.managedFields for every write (spec 2.4, 4.3, 4.4, 7, Appendix C), upstream's
 * FieldManager with its default chain: manager identities, times, reset fields, the metadata no
 * manager owns, the cap on Update entries, untracked objects, and the upgrade from client-side
 * apply. The store calls managedFieldsAfterWrite for creates, updates and patches, and the apply
 * handler applyConfiguration; both answer the managedFields to store.
 */
export interface TrackScope extends UpdateScope {
  /** The kind's group/version, as entries record it. */
  apiVersion: string;
  /** The sub-resource written ('' for the main resource). */
  subresource: string;
  /** Now, RFC 3339 (the time of entries that take fields). */
  time: string;
}

/** What an untracked object's fields belong to when it is first applied to (upstream's name). */
const BEFORE_FIRST_APPLY = 'before-first-apply';

/** A single entry with nothing in it: the request to reset managedFields (Appendix C). An empty list is not one. */
function isReset(requested: unknown): boolean {
  if (!Array.isArray(requested) || requested.length !== 1 || !isObject(requested[0])) return false;
  return Object.values(requested[0]).every((v) => v === undefined || v === null || v === '');
}

/** Decoded managedFields, or none when they cannot be read. */
function decodeOrNone(entries: unknown): Managers {
  try {
    return decodeManagedFields(entries);
  } catch (err) {
    if (err instanceof ManagedFieldsError) return new Map();
    throw err;
  }
}

/**
 * The managers a non-apply write starts from (upstream's decodeLiveOrNew): on the main resource
 * the managedFields the request carries when they can be read and are not empty (a client may
 * edit them), else the stored ones; a sub-resource write always starts from the stored ones.
 */
function startingManagers(live: KObject | null, next: KObject, subresource: string): Managers {
  if (!subresource) {
    const requested = decodeOrNone(next.metadata.managedFields);
    if (requested.size > 0) return requested;
  }
  return decodeOrNone(live?.metadata.managedFields);
}

/**
 * The managedFields after a create, update or patch of `next` over `live` (null for a create)
 * by `manager`: the writer takes every field it changed (spec 2.4: ownership passes to the
 * manager that changes a value); removed fields lose their owners. Undefined: none.
 *
 * A request whose managedFields are one empty entry resets them: the write starts from no
 * managers, so the writer owns what else it changed (Appendix C; upstream strips them and the
 * writer owns nothing). An existing object without managedFields stays untracked until an apply
 * (upstream's skipNonApplied). A live object whose structure cannot be walked keeps its
 * managedFields (upstream's UpdateNoErrors).
 */
export function managedFieldsAfterWrite(live: KObject | null, next: KObject, manager: string, scope: TrackScope): ManagedFieldsEntry[] | undefined {
  const resetting = !scope.subresource && isReset(next.metadata.managedFields);
  const managers = resetting ? new Map<string, Manager>() : startingManagers(live, next, scope.subresource);
  if (managers.size === 0 && live && !resetting) return undefined;
  const writer = { manager: manager || 'unknown', operation: 'Update' as const, apiVersion: scope.apiVersion, subresource: scope.subresource, time: scope.time };
  try {
    updateOwnership(withoutManagedFields(live) ?? zeroObject(scope.schema), withoutManagedFields(next), managers, writer, managerId(writer), scope);
  } catch (err) {
    if (err instanceof StructureError) return live?.metadata.managedFields;
    throw err;
  }
  capUpdateManagers(managers);
  return encodeManagedFields(managers);
}

/** upstream's GroupVersionKind.String() of the scope's kind, for messages. */
function gvkText(apiVersion: string, kind: unknown): string {
  const slash = apiVersion.indexOf('/');
  const gv = slash < 0 ? `/${apiVersion}` : apiVersion;
  return `${gv}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/** The set an applied configuration claims; its structure errors are the client's (400). */
function configFields(config: KObject, scope: TrackScope): FieldSet {
  try {
    return tracked(fieldSetOf(config, scope.schema, true), scope);
  } catch (err) {
    if (!(err instanceof StructureError)) throw err;
    const where = `${config.metadata.namespace ?? ''}/${config.metadata.name ?? ''}; ${gvkText(scope.apiVersion, config.kind)}`;
    throw errors.badRequest(`failed to create typed patch object (${where}): ${err.message}`);
  }
}

/**
 * Server-side apply of `config` by `manager` onto `live` (null: the object does not exist yet):
 * the object to store, its managedFields set. Throws 409 Conflict naming the fields other
 * managers own with other values (unless force), 400 for a configuration that sets
 * managedFields or is not of the kind's structure.
 */
export function applyConfiguration(live: KObject | null, config: KObject, manager: string, force: boolean, scope: TrackScope): KObject {
  if (Array.isArray(config.metadata?.managedFields)) throw errors.badRequest('metadata.managedFields must be nil');
  let managers: Managers;
  try {
    managers = decodeManagedFields(live?.metadata.managedFields);
  } catch (err) {
    if (err instanceof ManagedFieldsError) throw errors.internal(`failed to decode managed fields: ${err.message}`);
    throw err;
  }
  const configSet = configFields(config, scope);
  const base = withoutManagedFields(live) ?? zeroObject(scope.schema);
  try {
    if (managers.size === 0 && live) {
      // An untracked object: what it holds belongs to an Update entry of its own first (upstream).
      const before = { manager: BEFORE_FIRST_APPLY, operation: 'Update' as const, apiVersion: scope.apiVersion, subresource: scope.subresource, time: scope.time };
      updateOwnership(zeroObject(scope.schema), base, managers, before, managerId(before), scope);
    }
    const applier = { manager, operation: 'Apply' as const, apiVersion: scope.apiVersion, subresource: scope.subresource };
    const id = managerId(applier);
    const previousTime = managers.get(id)?.time;
    const attempt = (f: boolean, ms: Managers) => applyOwnership(base, config, configSet, ms, applier, id, f, scope);
    let merged: unknown;
    try {
      const trial = copyManagers(managers);
      merged = attempt(force, trial);
      managers = trial;
    } catch (err) {
      if (!(err instanceof ApplyConflicts)) throw err;
      merged = upgradeFromClientSide(err, live, manager, scope, () => attempt(true, managers));
    }
    const mine = managers.get(id);
    const changed = !jsonEqual(base, merged);
    if (mine) mine.time = changed ? scope.time : previousTime;
    const out = finish(merged as KObject, config, managers, manager);
    if (!live) dropZeroLeftovers(out, scope.schema);
    return out;
  } catch (err) {
    if (err instanceof StructureError) throw new ApiError('InternalError', `failed to apply to the stored object: ${err.message}`);
    throw err;
  }
}

/**
 * Conflicts of kubectl's first server-side apply over client-side applied fields (upgrade path,
 * last-applied.ts): when all of them are fields the annotation says kubectl applied, the apply is
 * forced; otherwise the 409 names only the others.
 */
function upgradeFromClientSide(err: ApplyConflicts, live: KObject | null, manager: string, scope: TrackScope, forced: () => unknown): unknown {
  if (manager !== UPGRADING_MANAGER || !live) throw conflictError(err.conflicts);
  const allowed = allowedByLastApplied(live, scope.schema, scope.apiVersion);
  const left = allowed ? err.conflicts.filter((c) => !has(allowed, c.path)) : err.conflicts;
  if (left.length > 0) throw conflictError(left);
  return forced();
}

/** The merged object as stored: last-applied annotation kept in step, nulls dropped, managedFields set. */
function finish(merged: KObject, config: KObject, managers: Managers, manager: string): KObject {
  // apiVersion and kind first, where a create's merge (onto the kind's zero object) put them last.
  const out: KObject = { apiVersion: merged.apiVersion, kind: merged.kind, ...merged, metadata: { ...merged.metadata } };
  if (out.apiVersion === undefined) delete out.apiVersion;
  if (out.kind === undefined) delete out.kind;
  if (manager === UPGRADING_MANAGER) rewriteLastApplied(out, config);
  stripNulls(out, config);
  const managedFields = encodeManagedFields(managers);
  if (managedFields) out.metadata.managedFields = managedFields;
  else delete out.metadata.managedFields;
  return out;
}
