import type { ObjectSchema } from '../api/schema';
import { BackWriter } from './back-writer';
import { encoderOf } from './encoder-gen';
import { planOf } from './plan';

/**
 * JSON-shaped objects to protobuf messages, by the encoders generated from each schema's plan
 * (encoder-gen.ts): fields in ascending number order, as Go's generated marshallers write them;
 * absent and null fields are not written (a Go reader sees its zero value either way). Maps are
 * repeated {key 1, value 2} entries in key order, repeated scalars are unpacked (proto2).
 */

type Json = Record<string, unknown>;

/** The message bytes of obj (no envelope). */
export function encodeProto(schema: ObjectSchema, obj: Json): Buffer {
  const w = new BackWriter();
  encoderOf(planOf(schema))(w, obj);
  return w.finish();
}
