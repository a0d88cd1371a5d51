import type { AnySchema, ArraySchema, MapSchema, ObjectSchema, ProtoMessage, ScalarSchema, Schema } from '../api/schema';

/**
 * Terse constructors for the per-kind schemas, so each kind file reads like its upstream type:
 * `obj('k8s.io.api.core.v1.ContainerPort', { name: [1, str()], hostPort: [2, int32()] })` names the
 * upstream message and gives each property its field number (the protobuf wire contract).
 */

export const str = (description?: string, enumValues?: readonly string[]): ScalarSchema =>
  enumValues ? { type: 'string', enum: enumValues, description } : { type: 'string', description };
export const strEnum = (values: readonly string[], description?: string): ScalarSchema => ({ type: 'string', enum: values, description });
/** An integer of no declared width; message fields use int32 or int64 (the proto generator refuses this one there). */
export const int = (description?: string): ScalarSchema => ({ type: 'integer', description });
export const int32 = (description?: string): ScalarSchema => ({ type: 'integer', format: 'int32', description });
export const int64 = (description?: string): ScalarSchema => ({ type: 'integer', format: 'int64', description });
export const double = (description?: string): ScalarSchema => ({ type: 'number', format: 'double', description });
/** Go []byte: base64 in JSON, bytes in protobuf. */
export const bytes = (description?: string): ScalarSchema => ({ type: 'string', format: 'byte', description });
export const bool = (description?: string): ScalarSchema => ({ type: 'boolean', description });
export const intOrStr = (description?: string): ScalarSchema => ({ type: 'int-or-string', description });
export const quantity = (description?: string): ScalarSchema => ({ type: 'quantity', description });
/** metav1.Time: RFC 3339 in whole seconds. */
export const time = (description?: string): ScalarSchema => ({ type: 'date-time', description });
/** metav1.MicroTime: RFC 3339 with microseconds. */
/** meta/v1 Duration: Go's duration text in JSON ("15s"), nanoseconds in protobuf. */
export const duration = (description?: string): ScalarSchema => ({ type: 'string', format: 'duration', description });

export const microTime = (description?: string): ScalarSchema => ({ type: 'date-time', format: 'micro-time', description });
export const any = (description?: string): Schema => ({ type: 'any', description });
/** metav1.FieldsV1: a JSON value carried as JSON text in protobuf. */
export const fieldsV1 = (description?: string): AnySchema => ({ type: 'any', raw: 'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1', description });
/** runtime.RawExtension: an embedded object, JSON text in protobuf. */
export const rawExtension = (description?: string): AnySchema => ({ type: 'any', raw: 'k8s.io.apimachinery.pkg.runtime.RawExtension', description });

/** Marks a scalar whose zero value is a value (upstream: a pointer or a field without omitempty). */
/**
 * The schema with a description of the field that holds it (OpenAPI, kubectl explain, the .proto
 * comment): for object, list and map fields, whose schema is often shared by several fields.
 */
export function described<S extends Schema>(description: string, s: S): S {
  const copy = { ...s, description };
  fieldDescribed.add(copy);
  return copy;
}

/** Copies made by described(): their description is the field's, not their type's (the .proto generator leaves it off the message). */
const fieldDescribed = new WeakSet<Schema>();

/** Whether s is a described() copy, whose description belongs to the field holding it. */
export const describesField = (s: Schema): boolean => fieldDescribed.has(s);
export const ptr = (s: ScalarSchema): ScalarSchema => ({ ...s, keepZero: true });

/**
 * A property of a message: its upstream field number and its schema, and upstream's .proto field
 * name when it is not the JSON name. Number 0 marks a JSON-only property: apiVersion and kind,
 * which protobuf carries in the runtime.Unknown envelope.
 */
export type Field = readonly [no: number, schema: Schema, protoName?: string];

interface ObjOptions {
  required?: readonly string[];
  atomic?: boolean;
  description?: string;
}

interface MessageOptions extends ObjOptions {
  /**
   * Embedded structs (json:",inline") by their field number: properties flattened into this
   * object. The .proto field name defaults to the message's name with a lower-case initial.
   */
  inline?: ReadonlyArray<readonly [no: number, schema: ObjectSchema, protoName?: string]>;
}

/** A JSON-only object (no protobuf form). */
export function obj(properties: Record<string, Schema>, opts?: ObjOptions): ObjectSchema;
/** An upstream message: its full name and each property with its field number. */
export function obj(message: string, fields: Record<string, Field>, opts?: MessageOptions): ObjectSchema;
export function obj(a: string | Record<string, Schema>, b?: Record<string, Field> | ObjOptions, c?: MessageOptions): ObjectSchema {
  if (typeof a !== 'string') return withOptions({ type: 'object', properties: a }, b ?? {});
  const fields = (b ?? {}) as Record<string, Field>;
  const properties: Record<string, Schema> = {};
  const numbers: Record<string, number> = {};
  const names: Record<string, string> = {};
  for (const [k, [no, schema, protoName]] of Object.entries(fields)) {
    properties[k] = schema;
    if (no > 0) numbers[k] = no;
    if (protoName) names[k] = protoName;
  }
  const proto: ProtoMessage = { name: a, fields: numbers };
  if (Object.keys(names).length) proto.names = names;
  if (c?.inline?.length) {
    proto.inline = c.inline.map(([no, schema, name]) => (name ? { no, schema, name } : { no, schema }));
    for (const [, schema] of c.inline) Object.assign(properties, schema.properties);
  }
  return withOptions({ type: 'object', properties, proto }, c ?? {});
}

function withOptions(s: ObjectSchema, opts: ObjOptions): ObjectSchema {
  if (opts.required) s.required = opts.required;
  if (opts.atomic) s.atomic = true;
  if (opts.description) s.description = opts.description;
  return s;
}

export const map = (values: Schema, description?: string): MapSchema => ({ type: 'map', values, description });
export const strMap = (description?: string): MapSchema => map(str(), description);
/** A map that apply replaces and owns whole (upstream's +mapType=atomic, e.g. PodSpec.nodeSelector). */
export const atomicMap = (values: Schema, description?: string): MapSchema => ({ ...map(values, description), atomic: true });
/** A scalar with its OpenAPI default (upstream's +default), which a listType map key takes when an element leaves it out. */
export const withDefault = (s: ScalarSchema, value: string | number | boolean): ScalarSchema => ({ ...s, default: value });
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

/** A list-valued map entry upstream wraps in a message of its own (items in field 1), e.g. ExtraValue. */
export const wrappedList = (message: string, items: Schema, description?: string): ArraySchema => ({ ...atomicList(items, description), wrapper: message });

/**
 * The envelope every kind shares: apiVersion and kind (no field numbers: upstream's TypeMeta
 * travels in the protobuf envelope), metadata (field 1 of every upstream kind), then the kind's
 * own fields.
 */
export function kindSchema(message: string, metadata: Schema, fields: Record<string, Field>, opts: ObjOptions = {}): ObjectSchema {
  return obj(message, { ...typeMeta(), metadata: [1, metadata.description ? metadata : described("Standard object's metadata: name, namespace, labels, annotations and the fields the system sets.", metadata)], ...fields }, opts);
}

/** apiVersion and kind: JSON-only properties (field number 0). */
export function typeMeta(): Record<'apiVersion' | 'kind', Field> {
  return {
    apiVersion: [0, str('APIVersion defines the versioned schema of this representation of an object.')],
    kind: [0, str('Kind is a string value representing the REST resource this object represents.')],
  };
}
