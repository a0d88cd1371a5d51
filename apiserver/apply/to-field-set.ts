import type { Schema } from '../api/schema';
import { EMPTY, isEmpty, LEAF, makeNode, type FieldSet } from './field-set';
import { describePath, fieldElement, type PathElement } from './path-element';
import { definedEntries, fieldSchema, isNamedField, keyedItems, shapeOf, StructureError, type FieldsShape, type ListShape } from './typed';

/**
 * The fields a value sets (structured-merge-diff's TypedValue.ToFieldSet): what an applier owns
 * of its configuration. Scalars and atomic values are owned whole; a granular struct owns its
 * fields, not itself, unless it is empty or null; map keys and list elements are owned
 * themselves as well as what they hold; an empty granular list owns nothing.
 *
 * With `unique`, a list element given twice is refused (an applied configuration, upstream's
 * "duplicate entries for key"); without, it is owned as an element only (a stored object).
 */
export function fieldSetOf(v: unknown, s: Schema | undefined, unique = false): FieldSet {
  const root = nodeOf(v, s, false, [], unique);
  return root.children ? makeNode(false, new Map(root.children)) : EMPTY;
}

function nodeOf(v: unknown, s: Schema | undefined, alwaysMember: boolean, path: PathElement[], unique: boolean): FieldSet {
  if (v === null) return LEAF;
  const shape = shapeOf(s, v);
  if (shape.kind === 'leaf') return LEAF;
  const children = shape.kind === 'fields' ? fieldsOf(v, shape, path, unique) : itemsOf(v as unknown[], shape, path, unique);
  return makeNode(alwaysMember || (shape.kind === 'fields' && children === undefined), children);
}

function fieldsOf(v: unknown, shape: FieldsShape, path: PathElement[], unique: boolean): Map<PathElement, FieldSet> | undefined {
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [k, c] of definedEntries(v)) {
    const pe = fieldElement(k);
    path.push(pe);
    // A declared field is owned itself only when it holds nothing below (upstream's named fields); a map key always.
    const n = nodeOf(c, fieldSchema(shape, k), !isNamedField(shape, k), path, unique);
    path.pop();
    if (!isEmpty(n)) (out ??= new Map()).set(pe, n);
  }
  return out;
}

function itemsOf(items: unknown[], shape: ListShape, path: PathElement[], unique: boolean): Map<PathElement, FieldSet> | undefined {
  if (items.length === 0) return undefined;
  const keyed = keyedItems(shape.list, items, () => describePath(path));
  const out = new Map<PathElement, FieldSet>();
  const duplicated = new Set<PathElement>();
  for (const [pe] of keyed) {
    if (!out.has(pe)) out.set(pe, EMPTY);
    else if (unique) throw new StructureError(describePath(path), `duplicate entries for key ${describePath([pe])}`);
    else duplicated.add(pe);
  }
  for (const [pe, item] of keyed) {
    // A duplicated element is owned as an element only (upstream), whatever its copies hold.
    if (duplicated.has(pe)) {
      out.set(pe, LEAF);
      continue;
    }
    path.push(pe);
    out.set(pe, nodeOf(item, shape.list.items, true, path, unique));
    path.pop();
  }
  return out;
}
