import type { ArraySchema, MapSchema, ObjectSchema, ScalarSchema, Schema } from '../api/schema';

/** Terse constructors for the per-kind schemas, so each kind file reads like its upstream type. */

export const str = (description?: string, enumValues?: readonly string[]): ScalarSchema =>
  enumValues ? { type: 'string', enum: enumValues, description } : { type: 'string', description };
export const strEnum = (values: readonly string[], description?: string): ScalarSchema => ({ type: 'string', enum: values, description });
/** An int32 field of the upstream type (ports, counts, most seconds fields). */
export const int32 = (description?: string): ScalarSchema => ({ type: 'integer', format: 'int32', description });
/** An int64 field of the upstream type (generations, grace periods, sizes in bytes). */
export const int64 = (description?: string): ScalarSchema => ({ type: 'integer', format: 'int64', description });
export const bool = (description?: string): ScalarSchema => ({ type: 'boolean', description });
export const intOrStr = (description?: string): ScalarSchema => ({ type: 'int-or-string', description });
export const quantity = (description?: string): ScalarSchema => ({ type: 'quantity', description });
export const time = (description?: string): ScalarSchema => ({ type: 'date-time', description });
export const any = (description?: string): Schema => ({ type: 'any', description });

export function obj(properties: Record<string, Schema>, opts: { required?: readonly string[]; atomic?: boolean; description?: string } = {}): ObjectSchema {
  const s: ObjectSchema = { type: 'object', properties };
  if (opts.required) s.required = opts.required;
  if (opts.atomic) s.atomic = true;
  if (opts.description) s.description = opts.description;
  return s;
}

export const map = (values: Schema, description?: string): MapSchema => ({ type: 'map', values, description });
export const strMap = (description?: string): MapSchema => map(str(), description);
export const quantityMap = (description?: string): MapSchema => map(quantity(), description);

/** An atomic list (upstream: no patchStrategy, listType atomic). */
export const atomicList = (items: Schema, description?: string): ArraySchema => ({ type: 'array', items, listType: 'atomic', description });
/** A set of scalars (upstream: patchStrategy merge on a primitive list, listType set). */
export const setList = (items: Schema, description?: string): ArraySchema => ({ type: 'array', items, listType: 'set', description });
/** A keyed list (upstream: patchMergeKey = keys[0], listType map with listMapKeys = keys). */
export const mapList = (items: Schema, keys: readonly string[], description?: string): ArraySchema => ({
  type: 'array',
  items,
  listType: 'map',
  mapKeys: keys,
  description,
});

/** The envelope every kind shares: apiVersion, kind, metadata, then the kind's own fields. */
export function kindSchema(metadata: Schema, fields: Record<string, Schema>, opts: { required?: readonly string[]; description?: string } = {}): ObjectSchema {
  return obj(
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata,
      ...fields,
    },
    opts,
  );
}
