/**
 * A small structural schema, one per kind: the single source for validation (types, required
 * fields, enums), field validation (unknown fields), strategic-merge keys, server-side apply list
 * types and the /openapi/v2 documents. It mirrors the OpenAPI v3 subset upstream uses, with the
 * x-kubernetes-* markers written as plain fields.
 */
export type Schema =
  | ScalarSchema
  | ObjectSchema
  | MapSchema
  | ArraySchema
  | { type: 'any'; description?: string };

export interface ScalarSchema {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'quantity' | 'date-time';
  /**
   * For integers, the Go type upstream decodes into: int32 bounds the value to ±2^31; int64 (and
   * an integer without a format) to what a double holds exactly, ±(2^53 - 1).
   */
  format?: 'int32' | 'int64';
  enum?: readonly string[];
  description?: string;
}

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, Schema>;
  required?: readonly string[];
  /** structType atomic: a patch or apply replaces the whole value. */
  atomic?: boolean;
  description?: string;
}

/** A map of string to values (labels, capacity, data). */
export interface MapSchema {
  type: 'map';
  values: Schema;
  description?: string;
}

export interface ArraySchema {
  type: 'array';
  items: Schema;
  /**
   * How strategic merge patch and apply treat the list (upstream's patchStrategy,
   * patchMergeKey, x-kubernetes-list-type and -list-map-keys). Absent means atomic: replaced whole.
   */
  listType?: 'atomic' | 'set' | 'map';
  /** Key fields of a listType map list; the first is the strategic-merge patchMergeKey. */
  mapKeys?: readonly string[];
  description?: string;
}

/** Follows a dotted path through object and map schemas; undefined when the path leaves the schema. */
export function schemaAt(schema: Schema | undefined, path: readonly string[]): Schema | undefined {
  let s = schema;
  for (const p of path) {
    if (!s) return undefined;
    if (s.type === 'object') s = s.properties[p];
    else if (s.type === 'map') s = s.values;
    else if (s.type === 'array') s = s.items;
    else if (s.type === 'any') return s;
    else return undefined;
  }
  return s;
}
