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

type Flat = Map<string, string>;

export function flatten(obj: KObject, schema: Schema | undefined, subresource: string): Flat {
  const out: Flat = new Map();
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    // A status write owns status only; a main-resource write owns everything else.
    if (subresource === 'status' ? k !== 'status' : k === 'status') continue;
    if (k === 'metadata') {
      if (!isObject(v)) continue;
      for (const [mk, mv] of Object.entries(v)) {
        if (OWNED_META.has(mk)) walk(mv, sub(schema, 'metadata', mk), ['f:metadata', `f:${mk}`], out);
      }
      continue;
    }
    walk(v, sub(schema, k), [`f:${k}`], out);
  }
  return out;
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

function walk(v: unknown, schema: Schema | undefined, path: string[], out: Flat): void {
  if (isObject(v) && Object.keys(v).length > 0 && !(schema?.type === 'object' && schema.atomic)) {
    for (const [k, child] of Object.entries(v)) walk(child, sub(schema, k), [...path, `f:${k}`], out);
    return;
  }
  if (Array.isArray(v) && schema?.type === 'array' && schema.listType === 'map' && schema.mapKeys?.length) {
    const keys = schema.mapKeys;
    for (const el of v) {
      if (!isObject(el)) continue;
      const id: Record<string, unknown> = {};
      for (const k of keys) if (el[k] !== undefined) id[k] = el[k];
      const elPath = [...path, `k:${JSON.stringify(id)}`];
      out.set(JSON.stringify([...elPath, '.']), '');
      for (const [k, child] of Object.entries(el)) walk(child, sub(schema.items, k), [...elPath, `f:${k}`], out);
    }
    return;
  }
  if (Array.isArray(v) && schema?.type === 'array' && schema.listType === 'set') {
    for (const el of v) out.set(JSON.stringify([...path, `v:${JSON.stringify(el)}`]), '');
    return;
  }
  out.set(JSON.stringify(path), JSON.stringify(v));
}

/** Nested FieldsV1 form of a set of flattened paths. */
export function toFieldsV1(paths: Iterable<string>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let node = root;
    for (const el of JSON.parse(p) as string[]) {
      node[el] ??= {};
      node = node[el] as Record<string, unknown>;
    }
  }
  return root;
}

export function fromFieldsV1(f: unknown, prefix: string[] = [], out: Set<string> = new Set()): Set<string> {
  if (!isObject(f)) return out;
  const keys = Object.keys(f);
  if (keys.length === 0 && prefix.length > 0) out.add(JSON.stringify(prefix));
  for (const k of keys) fromFieldsV1(f[k], [...prefix, k], out);
  return out;
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
  const before = prev ? flatten(prev, w.schema, w.subresource) : new Map<string, string>();
  const after = flatten(next, w.schema, w.subresource);
  const changed = new Set<string>();
  for (const [k, v] of after) if (before.get(k) !== v) changed.add(k);

  const entries: ManagedFieldsEntry[] = [];
  let mine: ManagedFieldsEntry | undefined;
  for (const e of prev?.metadata.managedFields ?? []) {
    const sameSub = (e.subresource ?? '') === w.subresource;
    const owned = fromFieldsV1(e.fieldsV1);
    // Fields another write changed pass to that writer; fields that no longer exist go away.
    for (const p of [...owned]) {
      if (sameSub && (changed.has(p) || (!after.has(p) && before.has(p)))) owned.delete(p);
    }
    if (sameSub && e.manager === w.manager && e.operation === w.operation) {
      mine = { ...e, fieldsV1: toFieldsV1(owned) };
      continue;
    }
    if (owned.size > 0) entries.push({ ...e, fieldsV1: toFieldsV1(owned) });
  }
  const ownedByMe = mine ? fromFieldsV1(mine.fieldsV1) : new Set<string>();
  for (const p of changed) ownedByMe.add(p);
  if (ownedByMe.size > 0 || !prev) {
    const e: ManagedFieldsEntry = {
      manager: w.manager,
      operation: w.operation,
      apiVersion: w.apiVersion,
      time: changed.size > 0 || !mine ? w.time : (mine.time ?? w.time),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(ownedByMe),
    };
    if (w.subresource) e.subresource = w.subresource;
    if (ownedByMe.size > 0) entries.push(e);
  }
  return entries;
}

/** The field manager for a write without ?fieldManager: the User-Agent's product token, as upstream derives it. */
export function managerFromUserAgent(ua: string | undefined): string {
  const token = (ua ?? '').split('/')[0].trim();
  return token.slice(0, 128) || 'unknown';
}
