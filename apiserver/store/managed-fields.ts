import type { Schema } from '../api/schema';
import type { KObject, ManagedFieldsEntry } from '../api/types';
import { isObject } from '../api/types';

/**
 * Field ownership for metadata.managedFields (spec 2.4) on non-apply writes: the manager of a
 * write takes every field whose value it changed; fields that disappear lose their owners;
 * managers left with nothing are dropped. Paths use upstream's FieldsV1 keys: f:<field> for
 * struct and map fields, k:{"key":value} for elements of keyed lists, "." for an element itself.
 */

/** Metadata fields a manager can own (the rest are system-set). */
const OWNED_META = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);

/**
 * The fields of an object as a tree of FieldsV1 keys. A node with `value` is a field (a leaf: a
 * scalar, an atomic value, an empty object, an element marker "."), holding its value's JSON for
 * comparison; other nodes only lead to fields. A tree, not a set of path strings: each path is
 * stored once per segment, so the work and memory of a write stay proportional to the object
 * (with path strings, a deep object with many leaves costs leaves × depth: a 3 MB body could take
 * seconds and a gigabyte).
 */
interface FieldNode {
  value?: string;
  children?: Map<string, FieldNode>;
}

/** FieldsV1 as stored: nested objects whose empty leaves are the owned fields. */
type FieldsV1 = Record<string, unknown>;

function child(node: FieldNode, key: string): FieldNode {
  node.children ??= new Map();
  let c = node.children.get(key);
  if (!c) node.children.set(key, (c = {}));
  return c;
}

/** The fields a write of `obj` through `subresource` can own. */
function fieldsOf(obj: KObject, schema: Schema | undefined, subresource: string): FieldNode {
  const root: FieldNode = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    // A status write owns status only; a main-resource write owns everything else.
    if (subresource === 'status' ? k !== 'status' : k === 'status') continue;
    if (k === 'metadata') {
      if (!isObject(v)) continue;
      for (const [mk, mv] of Object.entries(v)) {
        if (OWNED_META.has(mk)) walk(mv, sub(schema, 'metadata', mk), child(child(root, 'f:metadata'), `f:${mk}`));
      }
      continue;
    }
    walk(v, sub(schema, k), child(root, `f:${k}`));
  }
  return root;
}

function sub(schema: Schema | undefined, ...path: string[]): Schema | undefined {
  let s = schema;
  for (const p of path) {
    if (!s) return undefined;
    if (s.type === 'object') s = s.properties[p];
    else if (s.type === 'map') s = s.values;
    else return undefined;
  }
  return s;
}

function walk(v: unknown, schema: Schema | undefined, node: FieldNode): void {
  if (isObject(v) && Object.keys(v).length > 0 && !(schema?.type === 'object' && schema.atomic)) {
    for (const [k, c] of Object.entries(v)) walk(c, sub(schema, k), child(node, `f:${k}`));
    return;
  }
  if (Array.isArray(v) && schema?.type === 'array' && schema.listType === 'map' && schema.mapKeys?.length) {
    const keys = schema.mapKeys;
    for (const el of v) {
      if (!isObject(el)) continue;
      const id: Record<string, unknown> = {};
      for (const k of keys) if (el[k] !== undefined) id[k] = el[k];
      const elNode = child(node, `k:${JSON.stringify(id)}`);
      child(elNode, '.').value = '';
      for (const [k, c] of Object.entries(el)) walk(c, sub(schema.items, k), child(elNode, `f:${k}`));
    }
    return;
  }
  if (Array.isArray(v) && schema?.type === 'array' && schema.listType === 'set') {
    for (const el of v) child(node, `v:${JSON.stringify(el)}`).value = '';
    return;
  }
  node.value = JSON.stringify(v);
}

/** The fields of `after` whose value differs from (or is absent in) `before`, as a tree of markers. */
function changedFields(after: FieldNode, before: FieldNode | undefined): FieldNode | undefined {
  const out: FieldNode = {};
  if (after.value !== undefined && before?.value !== after.value) out.value = '';
  for (const [k, c] of after.children ?? []) {
    const d = changedFields(c, before?.children?.get(k));
    if (d) (out.children ??= new Map()).set(k, d);
  }
  return out.value !== undefined || out.children ? out : undefined;
}

/**
 * The owned fields `f` (FieldsV1) without those that `lost` says lost their owner; undefined when
 * none is left. `lost` is asked at each owned field with the nodes of the trees at its path.
 */
function keepOwned(f: unknown, at: { changed?: FieldNode; before?: FieldNode; after?: FieldNode }, lost: (n: typeof at) => boolean): FieldsV1 | undefined {
  if (!isObject(f)) return undefined;
  const keys = Object.keys(f);
  if (keys.length === 0) return lost(at) ? undefined : {};
  const out: FieldsV1 = {};
  for (const k of keys) {
    const kept = keepOwned(f[k], { changed: at.changed?.children?.get(k), before: at.before?.children?.get(k), after: at.after?.children?.get(k) }, lost);
    if (kept) out[k] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** FieldsV1 `f` with every field of the marker tree added. */
function addFields(f: FieldsV1, add: FieldNode): FieldsV1 {
  for (const [k, c] of add.children ?? []) {
    const existing = isObject(f[k]) ? f[k] : {};
    f[k] = addFields(existing, c);
  }
  return f;
}

export interface ManagerWrite {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  subresource: string;
  schema: Schema | undefined;
}

/** The managedFields of `next` after `w` wrote it over `prev` (null on create). */
export function updateManagedFields(prev: KObject | null, next: KObject, w: ManagerWrite): ManagedFieldsEntry[] {
  const before = prev ? fieldsOf(prev, w.schema, w.subresource) : undefined;
  const after = fieldsOf(next, w.schema, w.subresource);
  const changed = changedFields(after, before);
  // Fields another write changed pass to that writer; fields that no longer exist go away.
  const lost = (n: { changed?: FieldNode; before?: FieldNode; after?: FieldNode }) =>
    n.changed?.value !== undefined || (n.after?.value === undefined && n.before?.value !== undefined);

  const entries: ManagedFieldsEntry[] = [];
  let mine: ManagedFieldsEntry | undefined;
  let mineOwned: FieldsV1 | undefined;
  for (const e of prev?.metadata.managedFields ?? []) {
    const sameSub = (e.subresource ?? '') === w.subresource;
    const kept = sameSub ? keepOwned(e.fieldsV1, { changed, before, after }, lost) : keepOwned(e.fieldsV1, {}, () => false);
    const owned = kept && Object.keys(kept).length > 0 ? kept : undefined;
    if (sameSub && e.manager === w.manager && e.operation === w.operation) {
      mine = e;
      mineOwned = owned;
      continue;
    }
    if (owned) entries.push({ ...e, fieldsV1: owned });
  }
  const ownedByMe = changed ? addFields(mineOwned ?? {}, changed) : mineOwned;
  if (ownedByMe && Object.keys(ownedByMe).length > 0) {
    const e: ManagedFieldsEntry = {
      manager: w.manager,
      operation: w.operation,
      apiVersion: w.apiVersion,
      time: changed || !mine ? w.time : (mine.time ?? w.time),
      fieldsType: 'FieldsV1',
      fieldsV1: ownedByMe,
    };
    if (w.subresource) e.subresource = w.subresource;
    entries.push(e);
  }
  return entries;
}

/** The field manager for a write without ?fieldManager: the User-Agent's product token, as upstream derives it. */
export function managerFromUserAgent(ua: string | undefined): string {
  const token = (ua ?? '').split('/')[0].trim();
  return token.slice(0, 128) || 'unknown';
}
