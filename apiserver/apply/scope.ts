import type { ObjectSchema } from '../api/schema';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { EMPTY, setOf, type FieldSet } from './field-set';
import { fieldElement } from './path-element';

/**
 * Per-kind facts of field tracking, derived once per schema.
 *
 * How a write path treats the object: 'main' is the main resource of a type with a status
 * sub-resource (status is reset, never owned), 'status' a status-like sub-resource (only status
 * and metadata change: everything else is reset, and metadata's finalizers and ownerReferences,
 * which keepOtherHalf puts back), 'whole' a write that owns all it changes.
 */
export type WritePath = 'main' | 'status' | 'whole';

const ignored = new WeakMap<ObjectSchema, Map<WritePath, FieldSet>>();

/**
 * The fields a write path never owns (upstream's per-strategy ResetFields): the main resource of
 * a type with status resets status; its status sub-resource resets the rest (upstream lists
 * spec and a few metadata fields per kind; every top-level field here, so that new kinds need no
 * list of their own).
 */
export function ignoredFields(schema: ObjectSchema, path: WritePath): FieldSet {
  if (path === 'whole') return EMPTY;
  let byPath = ignored.get(schema);
  if (!byPath) ignored.set(schema, (byPath = new Map<WritePath, FieldSet>()));
  let s = byPath.get(path);
  if (s) return s;
  if (path === 'main') s = setOf([[fieldElement('status')]]);
  else {
    const others = Object.keys(schema.properties).filter((k) => !['metadata', 'status', 'apiVersion', 'kind'].includes(k));
    s = setOf([...others.map((k) => [fieldElement(k)]), ['f:metadata', 'f:finalizers'], ['f:metadata', 'f:ownerReferences']]);
  }
  byPath.set(path, s);
  return s;
}

const zeros = new WeakMap<ObjectSchema, KObject>();

/**
 * The live object of a create, as upstream's field manager sees it: the Go zero value of the
 * kind, whose top-level structs (metadata, spec, status: never nil in Go) are present, and in
 * them the required lists and structs (Go fields without omitempty) as null. So a create owns
 * `f:spec` and `f:containers` through what they hold, not themselves (no "." entry), as
 * upstream writes it; optional granular values (labels, a pointer struct) are added themselves.
 */
export function zeroObject(schema: ObjectSchema): KObject {
  let z = zeros.get(schema);
  if (!z) {
    z = { metadata: Object.freeze({}) };
    for (const [k, s] of Object.entries(schema.properties)) {
      // Structs Go never leaves nil: spec and status, and the kind's required ones (pointers are optional).
      const never = k === 'spec' || k === 'status' || schema.required?.includes(k);
      if (k !== 'metadata' && never && s.type === 'object' && !s.atomic) z[k] = Object.freeze(zeroStruct(s));
    }
    // Shared by every create of the kind: frozen, so that nothing writes into it.
    zeros.set(schema, Object.freeze(z));
  }
  return z;
}

function zeroStruct(s: ObjectSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of s.required ?? []) {
    const t = s.properties[r]?.type;
    if (t === 'array' || t === 'object' || t === 'map') out[r] = null;
  }
  return out;
}

/**
 * A create's merged object without what only the zero object put there (empty top-level
 * structs, required lists as null) and the configuration did not set: the stored object holds
 * what was applied and defaults, as one created by POST does.
 */
export function dropZeroLeftovers(merged: KObject, schema: ObjectSchema): void {
  const zero = zeroObject(schema);
  for (const [k, z] of Object.entries(zero)) {
    if (k === 'metadata') continue;
    const v = merged[k];
    if (v === z) {
      delete merged[k];
      continue;
    }
    if (!isObject(v) || !isObject(z)) continue;
    const nulls = Object.keys(z).filter((r) => v[r] === null);
    if (nulls.length === 0) continue;
    const copy = { ...v };
    for (const r of nulls) delete copy[r];
    merged[k] = copy;
  }
}

/** obj without metadata.managedFields (a shallow copy), or obj itself when it has none; undefined for null. */
export function withoutManagedFields(obj: KObject | null): KObject | undefined {
  if (!obj) return undefined;
  if (!isObject(obj.metadata) || obj.metadata.managedFields === undefined) return obj;
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  return { ...obj, metadata };
}
