import type { ObjectSchema } from '../api/schema';
import { isObject } from '../api/types';
import { hasProtobuf } from '../codec/plan';
import { listSchemaOf, statusSchema } from '../registry/meta-schemas';
import type { ResourceType } from '../registry/resource-type';

/**
 * The schema a response body is written with as protobuf: a Status, the request's kind or its
 * list. Anything else (a Table, discovery, OpenAPI) has no protobuf form here and goes out as JSON,
 * which clients read by its Content-Type.
 */
export function protobufSchemaFor(type: ResourceType | undefined, body: unknown): ObjectSchema | undefined {
  if (!type || !hasProtobuf(type.schema)) return isObject(body) && body.kind === 'Status' ? statusSchema : undefined;
  return responseSchemaFor(type, body);
}

/**
 * The schema of a response body: a Status, the request's kind or its list; undefined for anything
 * else (a Table, a review answer of another kind), which CBOR writes without one.
 */
export function responseSchemaFor(type: ResourceType | undefined, body: unknown): ObjectSchema | undefined {
  if (!isObject(body)) return undefined;
  if (body.kind === 'Status') return statusSchema;
  if (!type) return undefined;
  if (body.kind === type.kind) return type.schema;
  if (body.kind === type.listKind) return listSchemaOf(type.schema);
  return undefined;
}
