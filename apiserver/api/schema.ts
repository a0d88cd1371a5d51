/**
 * A small structural schema, one per kind: the single source for validation (types, required
 * fields, enums), field validation (unknown fields), strategic-merge keys, server-side apply list
 * types, the /openapi/v2 documents, the protobuf wire form (codec/, proto/) and CBOR's []byte
 * fields (codec/cbor-*.ts). It mirrors the OpenAPI v3 subset upstream uses, with the
 * x-kubernetes-* markers written as plain fields, plus the protobuf facts JSON cannot tell: each
 * object's upstream message name and field numbers, integer widths, bytes, micro-times.
 */
export type Schema =
  | ScalarSchema
  | ObjectSchema
  | MapSchema
  | ArraySchema
  | AnySchema;

/**
 * Any JSON value (a custom resource's x-kubernetes-preserve-unknown-fields without properties):
 * apply merges its objects key by key and replaces its lists whole (upstream's deduced type).
 */
export interface AnySchema {
  type: 'any';
  description?: string;
  /**
   * protobuf: the message whose bytes field 1 carries this value as JSON text (upstream's
   * meta/v1 FieldsV1 and runtime RawExtension). Absent: the value has no protobuf form.
   */
  raw?: string;
}

export interface ScalarSchema {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'quantity' | 'date-time';
  enum?: readonly string[];
  description?: string;
  /**
   * The width or encoding where JSON cannot tell, with OpenAPI's format names: an integer is an
   * int32 or int64 varint (validation bounds int32 to ±2^31 as upstream's Go type, int64 and an
   * integer without a format to what a double holds exactly, ±(2^53 - 1)); a 'byte' string is base64 in JSON and raw bytes in protobuf; a
   * 'double' number is a fixed64; a 'duration' string is Go's duration text (meta/v1 Duration, int64 nanoseconds in protobuf); a 'micro-time' date-time keeps microseconds (metav1.MicroTime,
   * where a plain date-time is a metav1.Time of whole seconds).
   */
  format?: 'int32' | 'int64' | 'byte' | 'double' | 'micro-time' | 'duration';
  /**
   * A zero value ("", 0, false) is a value: upstream's Go field is a pointer or is not omitempty,
   * so the protobuf decoder keeps a zero it reads. Otherwise a zero read from protobuf is an unset
   * field (Go's encoder writes every non-pointer field, even zero; its JSON omits them).
   */
  keepZero?: boolean;
  /**
   * The OpenAPI default, where server-side apply needs it: a key field of a listType map list
   * that an element leaves out takes this value in the element's key (upstream's
   * x-kubernetes-list-map-keys with a +default, e.g. ContainerPort.protocol "TCP").
   */
  default?: string | number | boolean;
}

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, Schema>;
  required?: readonly string[];
  /**
   * structType atomic (a custom resource's x-kubernetes-map-type: atomic on an object with
   * properties): a patch or apply replaces the whole value, and one manager owns it whole.
   */
  atomic?: boolean;
  /**
   * The field holding this object has patchStrategy retainKeys (a Deployment's strategy): a client's
   * strategic merge patch lists the keys to keep in `$retainKeys`, so switching the strategy type
   * drops the other type's fields. Written to OpenAPI as x-kubernetes-patch-strategy for clients.
   */
  retainKeys?: boolean;
  /**
   * A custom resource's x-kubernetes-preserve-unknown-fields on an object with properties: fields
   * it does not declare are kept (never pruned nor reported unknown) and untyped.
   */
  preserveUnknownFields?: boolean;
  description?: string;
  /** protobuf: the upstream message this object is; absent on JSON-only shapes. */
  proto?: ProtoMessage;
}

/** An object's protobuf message (the wire contract of upstream's generated.proto). */
export interface ProtoMessage {
  /** Fully qualified upstream message name, e.g. k8s.io.api.core.v1.PodSpec. */
  name: string;
  /**
   * The field number of each property encoded directly in this message. apiVersion and kind have
   * none: upstream's TypeMeta travels in the runtime.Unknown envelope, not in the message.
   */
  fields: Readonly<Record<string, number>>;
  /** Upstream's .proto field name where it differs from the JSON name (it never matters on the wire). */
  names?: Readonly<Record<string, string>>;
  /**
   * Embedded structs (Go's json:",inline"): their properties sit in this object's JSON but travel
   * as one message field, e.g. Volume's VolumeSource (field 2) and Probe's ProbeHandler (field 1,
   * named handler in upstream's .proto).
   */
  inline?: ReadonlyArray<{ no: number; schema: ObjectSchema; name?: string }>;
}

/** A map of string to values (labels, capacity, data). */
export interface MapSchema {
  type: 'map';
  values: Schema;
  /** mapType atomic (x-kubernetes-map-type: atomic): apply replaces and owns the whole map, not its keys. */
  atomic?: boolean;
  description?: string;
}

export interface ArraySchema {
  type: 'array';
  items: Schema;
  /**
   * How strategic merge patch and apply treat the list (upstream's patchStrategy,
   * patchMergeKey, x-kubernetes-list-type and -list-map-keys). Absent means atomic: replaced whole
   * (a CRD list without x-kubernetes-list-type, and a built-in list without patchStrategy merge).
   */
  listType?: 'atomic' | 'set' | 'map';
  /** Key fields of a listType map list; the first is the strategic-merge patchMergeKey. */
  mapKeys?: readonly string[];
  description?: string;
  /**
   * protobuf: the list travels wrapped in this message (items in its field 1), as upstream does
   * for list-valued map entries (authentication/v1 ExtraValue).
   */
  wrapper?: string;
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
