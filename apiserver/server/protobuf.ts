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
  if (!isObject(body)) return undefined;
  if (body.kind === 'Status') return statusSchema;
  if (!type || !hasProtobuf(type.schema)) return undefined;
  if (body.kind === type.kind) return type.schema;
  if (body.kind === type.listKind) return listSchemaOf(type.schema);
  return undefined;
}
