import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { sameApiVersion } from '../api/group-names';
import { isObject } from '../api/types';
import { decodeCbor } from '../codec/cbor-decode';
import { decodeObject as decodeProtobuf } from '../codec/envelope';
import { bodyLimitBytes, maxNestingDepth } from '../patch/json-bounds';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { parseJsonWithDuplicates, parseYamlWithDuplicates, type ParseLimits } from '../validation/duplicate-fields';
import { checkFields, type FieldValidation } from '../validation/field-validation';
import { requestBodyTaps } from './audit-taps';
import { findUnknownFields, pruneUnknownFields } from '../validation/unknown-fields';

/**
 * Largest request body accepted. Upstream kube-apiserver's limit is 3 MiB for most writes
 * (the etcd value limit is 1.5 MiB); we state the same figure.
 */
export const MAX_BODY_BYTES = bodyLimitBytes;

/**
 * Every body is decoded within these (issue 16): nesting at most maxNestingDepth, so that the
 * recursive walks after decoding stay within the stack, and a YAML document's aliases expand to
 * at most the body limit.
 */
const bodyLimits: ParseLimits = { maxDepth: maxNestingDepth, maxExpandedBytes: MAX_BODY_BYTES };

/** Reads the whole body, answering 413 once it passes the limit (the rest is not buffered). */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(tooLarge(limit));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(tooLarge(limit));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requestBodyTaps.get(req)?.(body);
      resolve(body);
    });
    req.on('error', reject);
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError('RequestEntityTooLarge', `the request body is larger than the limit of ${limit} bytes`);
}

/**
 * Parses JSON or YAML text, reporting duplicate keys, or a CBOR item (which may not repeat a key:
 * a 400, as upstream); syntax errors become 400s.
 */
export function parseDocument(body: Buffer, format: 'json' | 'yaml' | 'cbor'): { value: unknown; duplicates: string[] } {
  if (format === 'cbor') return { value: decodeCbor(body, undefined, bodyLimits), duplicates: [] };
  const text = body.toString('utf8');
  if (text.trim() === '') throw new ApiError('BadRequest', 'the request body is empty');
  try {
    return format === 'yaml' ? parseYamlWithDuplicates(text, bodyLimits) : parseJsonWithDuplicates(text, bodyLimits);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError('BadRequest', `the body of the request could not be decoded as ${format === 'yaml' ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
}

/** The formats a whole object arrives in (server/negotiation.ts bodyFormat answers them for POST and PUT). */
export type ObjectFormat = 'json' | 'yaml' | 'protobuf' | 'cbor';

/**
 * Decodes a whole object for create or update: checks its kind and apiVersion against the URL,
 * applies fieldValidation (Ignore / Warn / Strict, 4.4) and drops unknown fields. A protobuf body
 * is decoded by the kind's schema (it cannot carry unknown or duplicate fields); a CBOR body with
 * the schema telling its []byte fields (unknown fields are reported as for JSON).
 */
export function decodeObject(body: Buffer, format: ObjectFormat, t: ResourceType, fieldValidation: FieldValidation): { object: KObject; warnings: string[] } {
  // The protobuf decoder keeps only the schema's fields (unknown field numbers are skipped, as
  // upstream's), so there is nothing unknown to look for in what it returns.
  if (format === 'protobuf') return checkObject(decodeProtobuf(t.schema, body), [], t, fieldValidation, { schemaOnly: true });
  const parsed = format === 'cbor' ? { value: decodeCbor(body, t.schema, bodyLimits), duplicates: [] } : parseDocument(body, format);
  return checkObject(parsed.value, parsed.duplicates, t, fieldValidation);
}

/** The whole-object format of a POST or PUT body format (bodyFormat answers only these for them). */
export function objectFormat(format: string): ObjectFormat {
  return format === 'yaml' || format === 'protobuf' || format === 'cbor' ? format : 'json';
}

/**
 * Checks a decoded body's kind and apiVersion against the type and applies field validation to its
 * unknown and duplicate fields. opts.schemaOnly: the decoder returned only the schema's fields
 * (protobuf), so the walk for unknown fields is skipped.
 */
export function checkObject(
  value: unknown,
  duplicates: string[],
  t: ResourceType,
  fieldValidation: FieldValidation,
  opts: { schemaOnly?: boolean } = {},
): { object: KObject; warnings: string[] } {
  if (!isObject(value)) throw new ApiError('BadRequest', 'the request body must be a JSON or YAML object');
  const want = apiVersionOf(t);
  // Either name of the group (X.svc.io or X.k8s.io) is the same API version; the store writes the canonical one.
  if (value.apiVersion !== undefined && !sameApiVersion(value.apiVersion, want)) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw new ApiError('BadRequest', `the API version in the data (${String(value.apiVersion)}) does not match the expected API version (${want})`);
  }
  if (value.kind !== undefined && value.kind !== t.kind) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    throw new ApiError('BadRequest', `the kind in the data (${String(value.kind)}) does not match the expected kind (${t.kind})`);
  }
  if (value.metadata === undefined) value.metadata = {};
  if (!isObject(value.metadata)) throw new ApiError('BadRequest', 'metadata must be an object');
  const unknown = opts.schemaOnly ? [] : findUnknownFields(value, t.schema);
  const warnings = checkFields({ unknown, duplicates }, fieldValidation);
  if (unknown.length > 0) pruneUnknownFields(value, t.schema);
  return { object: value as KObject, warnings };
}
