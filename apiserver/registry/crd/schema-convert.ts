import type { ObjectSchema, Schema } from '../../api/schema';
import { isJsonObject } from '../../patch/json-value';
import { objectMetaSchema } from '../common-schemas';

/**
 * A CRD version's structural openAPIV3Schema as the registry's Schema (api/schema.ts), so that
 * custom resources go through the same machinery as built-in kinds: type and required checks,
 * pruning of unknown fields (decode's unknown-field handling: upstream prunes, and reports them
 * with fieldValidation Warn/Strict), server-side apply's list and map types (Appendix C: lists are
 * atomic unless x-kubernetes-list-type says otherwise, maps granular unless x-kubernetes-map-type
 * atomic), and OpenAPI. The value checks the Schema cannot say (formats, bounds, patterns, enums
 * of any type, nullable) are object-validation.ts's, on the JSON schema itself.
 */

type Json = Record<string, unknown>;

/** The whole object's Schema: apiVersion, kind and the standard metadata, then the CRD's fields. */
export function customResourceSchema(openAPIV3Schema: unknown): ObjectSchema {
  const root = isJsonObject(openAPIV3Schema) ? openAPIV3Schema : {};
  const body = toSchema(root);
  const properties: Record<string, Schema> = body.type === 'object' ? { ...body.properties } : {};
  properties.apiVersion = { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
  properties.kind = { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
  properties.metadata = objectMetaSchema;
  const out: ObjectSchema = { type: 'object', properties };
  if (body.type === 'any' || (body.type === 'object' && body.preserveUnknownFields)) out.preserveUnknownFields = true;
  const req = Array.isArray(root.required) ? root.required.filter((r): r is string => typeof r === 'string' && r !== 'metadata') : [];
  if (req.length) out.required = req;
  if (typeof root.description === 'string') out.description = root.description;
  return out;
}

/** One node of a structural schema as a Schema. */
export function toSchema(s: Json): Schema {
  const description = typeof s.description === 'string' ? s.description : undefined;
  const d = description ? { description } : {};
  if (s['x-kubernetes-int-or-string'] === true) return { type: 'int-or-string', ...d };
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  switch (s.type) {
    case 'object':
      return objectSchema(s, preserve, d);
    case 'array': {
      const items = isJsonObject(s.items) ? toSchema(s.items) : ({ type: 'any' } as Schema);
      const listType = s['x-kubernetes-list-type'];
      const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]).filter((k): k is string => typeof k === 'string') : [];
      if (listType === 'map' && keys.length) return { type: 'array', items, listType: 'map', mapKeys: keys, ...d };
      return { type: 'array', items, listType: listType === 'set' ? 'set' : 'atomic', ...d };
    }
    case 'string':
      return { type: 'string', ...d };
    case 'integer':
      // int32/int64 bounds and the other formats are object-validation's, with upstream's messages.
      return { type: 'integer', ...d };
    case 'number':
      return { type: 'number', ...d };
    case 'boolean':
      return { type: 'boolean', ...d };
    default:
      return { type: 'any', ...d };
  }
}

function objectSchema(s: Json, preserve: boolean, d: { description?: string }): Schema {
  const atomic = s['x-kubernetes-map-type'] === 'atomic';
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const props = isJsonObject(s.properties) ? s.properties : undefined;
  if (isJsonObject(s.additionalProperties) && !props) {
    return { type: 'map', values: toSchema(s.additionalProperties), ...(atomic ? { atomic: true } : {}), ...d };
  }
  if (s.additionalProperties === true && !props) return { type: 'map', values: { type: 'any' }, ...(atomic ? { atomic: true } : {}), ...d };
  if (preserve && !props && !embedded) return { type: 'any', ...d };
  const properties: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(props ?? {})) if (isJsonObject(v)) properties[k] = toSchema(v);
  if (embedded) {
    // x-kubernetes-embedded-resource: apiVersion, kind and metadata are implied (metadata pruned to ObjectMeta's fields, as upstream).
    properties.apiVersion ??= { type: 'string' };
    properties.kind ??= { type: 'string' };
    properties.metadata = objectMetaSchema;
  }
  const out: ObjectSchema = { type: 'object', properties, ...d };
  const req = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : [];
  if (req.length) out.required = req;
  if (atomic) out.atomic = true;
  if (preserve) out.preserveUnknownFields = true;
  return out;
}
