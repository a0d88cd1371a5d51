import type { ObjectSchema } from '../../apiserver/api/schema';
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE } from '../../apiserver/codec/envelope';
import { listSchemaOf } from '../../apiserver/registry/meta-schemas';

/**
 * One wire encoding as a client speaks it: the headers it sends, how it writes a request body and
 * how it reads a list answer. The protobuf client uses svc's own codec (the bench has no other
 * protobuf implementation for these messages); its cost is the client's, reported apart from the
 * server's.
 */
export interface Encoding {
  name: 'json' | 'protobuf';
  /** Accept and Content-Type of every request. */
  mediaType: string;
  /** The request body of obj (whose apiVersion/kind name schema's kind). */
  body(schema: ObjectSchema, obj: Record<string, unknown>): string | Buffer;
  /** The items of a list answer of itemSchema's kind. */
  listItems(itemSchema: ObjectSchema, bytes: Buffer): unknown[];
}

export const JSON_ENCODING: Encoding = {
  name: 'json',
  mediaType: 'application/json',
  body: (_schema, obj) => JSON.stringify(obj),
  listItems: (_schema, bytes) => (JSON.parse(bytes.toString('utf8')) as { items?: unknown[] }).items ?? [],
};

export const PROTOBUF_ENCODING: Encoding = {
  name: 'protobuf',
  mediaType: PROTOBUF_MEDIA_TYPE,
  body: (schema, obj) => encodeObject(schema, obj),
  listItems: (schema, bytes) => (decodeObject(listSchemaOf(schema), bytes).items as unknown[] | undefined) ?? [],
};
