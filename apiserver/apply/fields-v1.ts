import { isObject } from '../api/types';
import { EMPTY, makeNode, sortedChildren, union, type FieldSet } from './field-set';
import { canonicalElement, ElementError, type PathElement } from './path-element';

/**
 * metav1.FieldsV1, the wire form of a field set (spec 2.4): a nested object keyed by path
 * elements; `{}` marks a path that is in the set, and a path that is in the set and has longer
 * paths below it carries a "." key besides them. Written in upstream's element order.
 */
export type FieldsV1 = Record<string, unknown>;

/** The FieldsV1 object of a set. */
export function toFieldsV1(s: FieldSet): FieldsV1 {
  const out: FieldsV1 = {};
  if (s.member && s.children) out['.'] = {};
  for (const [pe, c] of sortedChildren(s)) out[pe] = c.children ? toFieldsV1(c) : {};
  return out;
}

/**
 * The set a FieldsV1 object holds. Keys are made canonical (canonicalElement); keys of an unknown
 * element type are skipped, as upstream does. Throws ElementError on anything malformed.
 */
export function fromFieldsV1(v: unknown): FieldSet {
  const root = readNode(v);
  return root.children ? makeNode(false, new Map(root.children)) : EMPTY;
}

function readNode(v: unknown): FieldSet {
  if (!isObject(v)) throw new ElementError('fieldsV1 must be an object of objects');
  let member = false;
  let children: Map<PathElement, FieldSet> | undefined;
  for (const [k, cv] of Object.entries(v)) {
    if (k === '.') {
      member = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = canonicalElement(k);
    } catch (err) {
      throw err instanceof ElementError ? err : new ElementError(`parsing key as path element: ${(err as Error).message}`);
    }
    if (pe === undefined) continue;
    const c = readNode(cv);
    children ??= new Map();
    const had = children.get(pe);
    children.set(pe, had ? union(had, c) : c);
  }
  // An element with nothing below it is itself in the set (upstream's readIterV1).
  return makeNode(member || children === undefined, children);
}
