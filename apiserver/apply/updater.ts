import type { ObjectSchema } from '../api/schema';
import { compareValues, type Comparison } from './compare';
import { difference, EMPTY, forEachPath, intersection, isEmpty, recursiveDifference, setOf, union, within, type FieldSet } from './field-set';
import { dropEmpty, type Manager, type Managers } from './managers';
import { mergeValues } from './merge';
import type { PathElement } from './path-element';
import { pruneRemoved } from './prune';
import { reconcileWithSchema } from './reconcile';

/**
 * Ownership on typed field sets (structured-merge-diff's merge.Updater), for one kind at one
 * API version: what a write takes from the other managers, what an applier's configuration
 * makes of the live object, and the conflicts in between.
 */
export interface UpdateScope {
  schema: ObjectSchema;
  /**
   * Fields this write path never owns nor takes (upstream's reset fields, through its
   * IgnoreFilter): status for the main resource of a type with status, all but status for
   * /status. Removed with everything below them.
   */
  ignore: FieldSet;
  /** When set, the only fields this write path owns or takes (upstream's include filter: pods/ephemeralcontainers). */
  only?: FieldSet;
}

/** A field another manager owns that an apply would change. */
export interface Conflict {
  /** The manager's identity (managerId). */
  manager: string;
  path: readonly PathElement[];
}

/** An apply refused for conflicts (without force). */
export class ApplyConflicts extends Error {
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} conflicts`);
  }
}

/**
 * Metadata no manager owns (upstream's stripMetaManager): type meta, the metadata struct itself
 * and the fields the server sets. Labels, annotations, finalizers and owner references stay.
 */
export const STRIPPED: FieldSet = setOf([
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['f:metadata', `f:${f}`]),
]);

/** The managers' sets made to fit the current schema (a type that turned atomic). */
export function reconcileManagers(managers: Managers, schema: ObjectSchema): void {
  for (const m of managers.values()) m.set = reconcileWithSchema(m.set, schema);
}

/** What of s a write path tracks: without its ignored fields, within its only fields. */
export function tracked(s: FieldSet, scope: UpdateScope): FieldSet {
  const kept = isEmpty(scope.ignore) ? s : recursiveDifference(s, scope.ignore);
  return scope.only ? within(kept, scope.only) : kept;
}

function filtered(c: Comparison, scope: UpdateScope): Comparison {
  if (isEmpty(scope.ignore) && !scope.only) return c;
  return { added: tracked(c.added, scope), modified: tracked(c.modified, scope), removed: tracked(c.removed, scope) };
}

/**
 * The fields next changes from live leave their other owners (every manager but `self`):
 * modified or added ones are taken (conflicts: without force, an ApplyConflicts is thrown and
 * nothing changes), removed ones are owned by nobody. Managers left empty are dropped.
 */
export function takeFromOthers(live: unknown, next: unknown, managers: Managers, self: string | undefined, force: boolean, scope: UpdateScope): Comparison {
  const diff = filtered(compareValues(live, next, scope.schema), scope);
  const changed = union(diff.modified, diff.added);
  const taken: Array<[Manager, FieldSet]> = [];
  const conflicts: Conflict[] = [];
  if (!isEmpty(changed)) {
    for (const [id, m] of managers) {
      if (id === self) continue;
      const c = intersection(m.set, changed);
      if (isEmpty(c)) continue;
      taken.push([m, c]);
      if (!force) forEachPath(c, (path) => conflicts.push({ manager: id, path }));
    }
  }
  if (conflicts.length > 0) throw new ApplyConflicts(conflicts);
  for (const [m, c] of taken) m.set = difference(m.set, c);
  if (!isEmpty(diff.removed)) for (const [id, m] of managers) if (id !== self) m.set = difference(m.set, diff.removed);
  dropEmpty(managers);
  return diff;
}

/**
 * A non-apply write (upstream's Updater.Update as the managedFieldsUpdater runs it): the writer
 * takes every field whose value it changed or added, from whoever owned it, and keeps what it
 * owned before unless removed. Returns what the write took (stripped, ignored fields left out):
 * when nothing, the writer's entry (and its time) stays as it was.
 */
export function updateOwnership(live: unknown, next: unknown, managers: Managers, writer: Omit<Manager, 'set'>, id: string, scope: UpdateScope): FieldSet {
  reconcileManagers(managers, scope.schema);
  const diff = takeFromOthers(live, next, managers, undefined, true, scope);
  const took = difference(union(diff.modified, diff.added), STRIPPED);
  if (isEmpty(took)) return EMPTY;
  const prev = managers.get(id);
  managers.set(id, { ...writer, set: prev ? union(prev.set, took) : took, stored: prev?.stored });
  return took;
}

/**
 * Server-side apply (upstream's Updater.Apply): the configuration merged onto live, the
 * applier's set replaced by the configuration's (`configSet`), what it applied before and
 * nobody owns now removed, and the fields the merge changed taken from their other owners (a
 * conflict unless force). Returns the merged object; the applier's entry is in `managers`.
 */
export function applyOwnership(live: unknown, config: unknown, configSet: FieldSet, managers: Managers, applier: Omit<Manager, 'set'>, id: string, force: boolean, scope: UpdateScope): unknown {
  reconcileManagers(managers, scope.schema);
  let merged = mergeValues(live, config, scope.schema);
  const last = managers.get(id)?.set;
  managers.set(id, { ...applier, set: configSet, stored: managers.get(id)?.stored });
  if (last && !isEmpty(last)) {
    let owned: FieldSet = EMPTY;
    for (const m of managers.values()) owned = union(owned, m.set);
    merged = pruneRemoved(merged, scope.schema, last, owned);
  }
  takeFromOthers(live, merged, managers, id, force, scope);
  const mine = managers.get(id);
  if (mine) mine.set = difference(mine.set, STRIPPED);
  dropEmpty(managers);
  return merged;
}
