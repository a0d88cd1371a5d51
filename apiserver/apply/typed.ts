import type { ArraySchema, ObjectSchema, Schema } from '../api/schema';
import { isObject } from '../api/types';
import { ElementError, keyElement, valueElement, type PathElement } from './path-element';

/**
 * How apply sees a value at one place of a schema (structured-merge-diff's typed values): the
 * schema object is the only source of structure, so built-in kinds and custom resources (whose
 * schemas issue 22 builds with the x-kubernetes-* markers mapped onto the same fields) go the
 * same way.
 *
 * - leaf: scalars and atomic values (listType atomic or none, structType/mapType atomic): owned
 *   and replaced whole.
 * - fields: a granular struct (properties), map (values) or, where the schema says nothing or
 *   `any`, an untyped object merged key by key (upstream's deduced type: keys are map keys).
 * - list: a granular list, listType set (elements by value) or map (elements by key fields).
 *
 * A value whose JSON type does not fit its schema is a leaf.
 */
export type Shape = LeafShape | FieldsShape | ListShape;

export interface LeafShape {
  kind: 'leaf';
}

export interface FieldsShape {
  kind: 'fields';
  /** The struct whose properties these are; undefined for maps and untyped objects. */
  struct?: ObjectSchema;
  /** A map's value schema; undefined for structs and untyped objects. */
  values?: Schema;
}

export interface ListShape {
  kind: 'list';
  list: ArraySchema;
}

const LEAF_SHAPE: LeafShape = { kind: 'leaf' };
const UNTYPED: FieldsShape = { kind: 'fields' };
const shapes = new WeakMap<Schema, Shape>();

/** The shape a schema gives its values (object-valued ones for fields, arrays for lists). */
export function schemaShape(s: Schema | undefined): Shape {
  if (!s || s.type === 'any') return UNTYPED;
  let shape = shapes.get(s);
  if (shape) return shape;
  if (s.type === 'object') shape = s.atomic ? LEAF_SHAPE : { kind: 'fields', struct: s };
  else if (s.type === 'map') shape = s.atomic ? LEAF_SHAPE : { kind: 'fields', values: s.values };
  else if (s.type === 'array') shape = s.listType === 'set' || s.listType === 'map' ? { kind: 'list', list: s } : LEAF_SHAPE;
  else shape = LEAF_SHAPE;
  shapes.set(s, shape);
  return shape;
}

/** Whether s is a container apply treats as one value: structType, mapType or listType atomic. */
export function isAtomicContainer(s: Schema | undefined): boolean {
  return (s?.type === 'object' || s?.type === 'map' || s?.type === 'array') && schemaShape(s).kind === 'leaf';
}

/** The shape of value v under schema s (undefined and null fit any shape). */
export function shapeOf(s: Schema | undefined, v: unknown): Shape {
  const shape = schemaShape(s);
  if (v === undefined || v === null) return shape;
  if (shape.kind === 'fields') return isObject(v) ? shape : LEAF_SHAPE;
  if (shape.kind === 'list') return Array.isArray(v) ? shape : LEAF_SHAPE;
  return LEAF_SHAPE;
}

/** The shape of two values at one place: a leaf unless both fit the schema's granular shape. */
export function shapeOfPair(s: Schema | undefined, a: unknown, b: unknown): Shape {
  const sa = shapeOf(s, a);
  if (sa.kind === 'leaf') return sa;
  const sb = shapeOf(s, b);
  return sb.kind === sa.kind ? sa : LEAF_SHAPE;
}

/** The schema of key k of a fields shape (undefined: untyped). */
export function fieldSchema(shape: FieldsShape, k: string): Schema | undefined {
  if (shape.struct) return Object.prototype.hasOwnProperty.call(shape.struct.properties, k) ? shape.struct.properties[k] : undefined;
  return shape.values;
}

/** Whether k is a declared field of a struct (upstream: a named field, not a map key). */
export function isNamedField(shape: FieldsShape, k: string): boolean {
  return shape.struct !== undefined && Object.prototype.hasOwnProperty.call(shape.struct.properties, k);
}

/** The path element of a list item; throws ElementError when the item cannot be addressed. */
export function itemElement(list: ArraySchema, item: unknown): PathElement {
  if (list.listType === 'map' && list.mapKeys?.length) return keyElement(item, list.mapKeys, list.items);
  return valueElement(item);
}

/** Whether v holds nothing: absent, null, {} or []. */
export function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) {
    for (const k in v) if (v[k] !== undefined) return false;
    return true;
  }
  return false;
}

/** The entries of an object value whose value is defined (null included). */
export function definedEntries(v: unknown): Array<[string, unknown]> {
  if (!isObject(v)) return [];
  return Object.entries(v).filter(([, x]) => x !== undefined);
}

/** An error in a value's structure, with its path as upstream prints it (`.spec.containers: element 0: ...`). */
export class StructureError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** The items of a granular list keyed by element, in order; throws StructureError (path, element index). */
export function keyedItems(list: ArraySchema, items: readonly unknown[], path: () => string): Array<[PathElement, unknown]> {
  return items.map((item, i) => {
    try {
      return [itemElement(list, item), item];
    } catch (err) {
      if (err instanceof ElementError) throw new StructureError(path(), `element ${i}: ${err.message}`);
      throw err;
    }
  });
}

