import { jsonEqual } from '../api/json-equal';
import type { Schema } from '../api/schema';
import { isObject } from '../api/types';
import { EMPTY, isEmpty, LEAF, makeNode, type FieldSet } from './field-set';
import { describePath, fieldElement, type PathElement } from './path-element';
import { fieldSchema, isEmptyValue, keyedItems, shapeOfPair, type FieldsShape, type ListShape } from './typed';

/**
 * What changed from one value to another (structured-merge-diff's TypedValue.Compare): the
 * fields added, modified and removed. A leaf (scalar, atomic value, or a granular value empty on
 * both sides) is one field; a granular struct, map or list element that appears or disappears is
 * added or removed itself, besides everything it holds.
 */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

const SAME: Comparison = Object.freeze({ added: EMPTY, modified: EMPTY, removed: EMPTY });
const ADDED: Comparison = Object.freeze({ added: LEAF, modified: EMPTY, removed: EMPTY });
const REMOVED: Comparison = Object.freeze({ added: EMPTY, modified: EMPTY, removed: LEAF });
const MODIFIED: Comparison = Object.freeze({ added: EMPTY, modified: LEAF, removed: EMPTY });

/** The comparison of two whole objects (or any two values) under schema s. */
export function compareValues(lhs: unknown, rhs: unknown, s: Schema | undefined): Comparison {
  const c = compareAt(lhs, rhs, s, []);
  const strip = (n: FieldSet) => (n.children ? makeNode(false, new Map(n.children)) : EMPTY);
  return { added: strip(c.added), modified: strip(c.modified), removed: strip(c.removed) };
}

/** Child comparisons gathered per kind, then made into this path's nodes. */
class Gathered {
  added?: Map<PathElement, FieldSet>;
  modified?: Map<PathElement, FieldSet>;
  removed?: Map<PathElement, FieldSet>;

  add(pe: PathElement, c: Comparison): void {
    if (!isEmpty(c.added)) (this.added ??= new Map()).set(pe, c.added);
    if (!isEmpty(c.modified)) (this.modified ??= new Map()).set(pe, c.modified);
    if (!isEmpty(c.removed)) (this.removed ??= new Map()).set(pe, c.removed);
  }

  /** Marks pe itself added, modified or removed, on top of what was gathered for it. */
  mark(pe: PathElement, kind: 'added' | 'modified' | 'removed'): void {
    const m: Map<PathElement, FieldSet> = (this[kind] ??= new Map<PathElement, FieldSet>());
    const had = m.get(pe);
    m.set(pe, had ? makeNode(true, had.children && new Map(had.children)) : LEAF);
  }
}

function compareAt(l: unknown, r: unknown, s: Schema | undefined, path: PathElement[]): Comparison {
  if (l === undefined && r === undefined) return SAME;
  const shape = shapeOfPair(s, l, r);
  if (shape.kind === 'leaf' || (isEmptyValue(l) && isEmptyValue(r))) {
    if (l === undefined) return ADDED;
    if (r === undefined) return REMOVED;
    return jsonEqual(l, r) ? SAME : MODIFIED;
  }
  const g = new Gathered();
  if (shape.kind === 'fields') compareFields(l, r, shape, path, g);
  else compareItems(l, r, shape, path, g);
  return {
    added: makeNode(l === undefined, g.added),
    modified: makeNode(false, g.modified),
    removed: makeNode(r === undefined, g.removed),
  };
}

function compareFields(l: unknown, r: unknown, shape: FieldsShape, path: PathElement[], g: Gathered): void {
  const lo = isObject(l) ? l : undefined;
  const ro = isObject(r) ? r : undefined;
  const visit = (k: string, lv: unknown, rv: unknown) => {
    const pe = fieldElement(k);
    path.push(pe);
    g.add(pe, compareAt(lv, rv, fieldSchema(shape, k), path));
    path.pop();
  };
  if (lo) for (const k of Object.keys(lo)) if (lo[k] !== undefined) visit(k, lo[k], ro?.[k]);
  if (ro) for (const k of Object.keys(ro)) if (ro[k] !== undefined && lo?.[k] === undefined) visit(k, undefined, ro[k]);
}

/** Items grouped by element, in first-seen order (left then right). */
function groupItems(list: ListShape, items: unknown, path: PathElement[], into: Map<PathElement, { l: unknown[]; r: unknown[] }>, side: 'l' | 'r'): void {
  if (!Array.isArray(items)) return;
  for (const [pe, item] of keyedItems(list.list, items, () => describePath(path))) {
    let e = into.get(pe);
    if (!e) into.set(pe, (e = { l: [], r: [] }));
    e[side].push(item);
  }
}

function compareItems(l: unknown, r: unknown, shape: ListShape, path: PathElement[], g: Gathered): void {
  const byElement = new Map<PathElement, { l: unknown[]; r: unknown[] }>();
  groupItems(shape, l, path, byElement, 'l');
  groupItems(shape, r, path, byElement, 'r');
  const items = shape.list.items;
  for (const [pe, { l: ls, r: rs }] of byElement) {
    path.push(pe);
    if (ls.length <= 1 && rs.length <= 1) {
      g.add(pe, compareAt(ls[0], rs[0], items, path));
    } else if (ls.length >= 2 && rs.length >= 2) {
      // Duplicated on both sides: one field, modified unless the copies are equal (upstream).
      if (!jsonEqual(ls, rs)) g.mark(pe, 'modified');
    } else if (ls.length >= 2) {
      if (rs.length) g.add(pe, compareAt(undefined, rs[0], items, path));
      g.mark(pe, 'removed');
    } else {
      if (ls.length) g.add(pe, compareAt(ls[0], undefined, items, path));
      g.mark(pe, 'added');
    }
    path.pop();
  }
}
