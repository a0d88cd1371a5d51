import type { Cause } from '../../api/errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { isJsonObject } from '../../patch/json-value';

/**
 * Upstream's checks of a CRD version's openAPIV3Schema (apiextensions validation's
 * ValidateCustomResourceDefinitionOpenAPISchema and the structural schema rules of
 * apiextensions-apiserver/pkg/apis/apiextensions/validation and pkg/apiserver/schema): the
 * unsupported keywords, a type on every node (except below x-kubernetes-int-or-string and
 * x-kubernetes-preserve-unknown-fields), properties and additionalProperties exclusive, items on
 * every array, the list and map markers, and metadata at the root limited to name and
 * generateName. Field paths are upstream's (`...openAPIV3Schema.properties[spec].type`).
 */

type Json = Record<string, unknown>;

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'];

/** Causes for the schema at path (e.g. spec.versions[0].schema.openAPIV3Schema); none when structural. */
export function validateStructuralSchema(schema: unknown, path: string): Cause[] {
  const out: Cause[] = [];
  if (!isJsonObject(schema)) return [required(path, 'schemas are required')];
  if (schema.type !== 'object') out.push(invalid(`${path}.type`, schema.type ?? '', 'must be object at the root'));
  node(schema, path, out, { root: true, inValueValidation: false });
  checkRootMetadata(schema, path, out);
  return out;
}

interface Where {
  root: boolean;
  inValueValidation: boolean;
  /** The node is an object property, array items or additionalProperties (its type may not be empty). */
  field?: 'property' | 'items' | 'additionalProperties';
}

function node(s: Json, path: string, out: Cause[], where: Where): void {
  unsupported(s, path, out);
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'];
  if (preserve === false) out.push(invalid(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  if (s['x-kubernetes-int-or-string'] === false) out.push(invalid(`${path}.x-kubernetes-int-or-string`, false, 'must be true or undefined'));
  const type = s.type;
  if (type !== undefined && (typeof type !== 'string' || !TYPES.includes(type))) {
    out.push(notSupported(`${path}.type`, type, TYPES));
  }
  if (!where.inValueValidation) structuralType(s, path, out, where, intOrString, preserve === true);
  if (s.nullable !== undefined && typeof s.nullable !== 'boolean') out.push(invalid(`${path}.nullable`, s.nullable, 'must be a boolean'));
  const props = s.properties;
  const additional = s.additionalProperties;
  if (props !== undefined && !isJsonObject(props)) out.push(invalid(`${path}.properties`, props, 'must be an object'));
  if (additional !== undefined && isJsonObject(props) && Object.keys(props).length > 0 && additional !== true) {
    out.push(forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
  }
  if (isJsonObject(props)) {
    for (const [k, v] of Object.entries(props)) {
      const p = `${path}.properties[${k}]`;
      if (isJsonObject(v)) node(v, p, out, { ...where, root: false, field: 'property' });
      else out.push(invalid(p, v, 'must be a schema object'));
    }
  }
  if (isJsonObject(additional)) node(additional, `${path}.additionalProperties`, out, { ...where, root: false, field: 'additionalProperties' });
  if (Array.isArray(s.items)) out.push(forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  else if (isJsonObject(s.items)) node(s.items, `${path}.items`, out, { ...where, root: false, field: 'items' });
  else if (type === 'array' && !where.inValueValidation) out.push(required(`${path}.items`, 'must be specified'));
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (list === undefined) continue;
    if (!Array.isArray(list)) out.push(invalid(`${path}.${k}`, list, 'must be a list of schemas'));
    else list.forEach((x, i) => isJsonObject(x) && valueValidation(x, `${path}.${k}[${i}]`, out));
  }
  if (isJsonObject(s.not)) valueValidation(s.not, `${path}.not`, out);
  markers(s, path, out);
}

/**
 * Schemas under allOf/anyOf/oneOf/not validate values only: upstream forbids them defaults and
 * structure of their own. A type is let through (upstream allows it where it repeats the
 * structure, as the `anyOf: [{type: integer}, {type: string}]` of every int-or-string field).
 */
function valueValidation(s: Json, path: string, out: Cause[]): void {
  for (const k of ['default', 'nullable', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-list-type', 'x-kubernetes-map-type', 'additionalProperties']) {
    if (s[k] !== undefined) out.push(forbidden(`${path}.${k}`, 'must be empty to be structural'));
  }
  node(s, path, out, { root: false, inValueValidation: true });
}

function structuralType(s: Json, path: string, out: Cause[], where: Where, intOrString: boolean, preserve: boolean): void {
  const type = s.type;
  if (intOrString) {
    if (type !== undefined) out.push(invalid(`${path}.type`, type, 'must be empty if x-kubernetes-int-or-string is true'));
    return;
  }
  if (type !== undefined && type !== '') return;
  if (preserve) return;
  if (where.root) return; // reported as "must be object at the root"
  const detail = where.field === 'items' ? 'must not be empty for specified array items' : 'must not be empty for specified object fields';
  out.push(required(`${path}.type`, detail));
}

function unsupported(s: Json, path: string, out: Cause[]): void {
  const forbid: Array<[string, string]> = [
    ['$ref', '$ref is not supported'],
    ['id', 'id is not supported'],
    ['additionalItems', 'additionalItems is not supported'],
    ['patternProperties', 'patternProperties is not supported'],
    ['definitions', 'definitions is not supported'],
    ['dependencies', 'dependencies is not supported'],
  ];
  for (const [k, msg] of forbid) if (s[k] !== undefined) out.push(forbidden(`${path}.${k}`, msg));
  if (s.type === 'null') out.push(forbidden(`${path}.type`, 'type cannot be set to null'));
  if (s.uniqueItems === true) out.push(forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (typeof s.pattern === 'string') {
    try {
      new RegExp(s.pattern, 'u');
    } catch {
      out.push(invalid(`${path}.pattern`, s.pattern, 'must be a valid regular expression'));
    }
  }
}

/** x-kubernetes-list-type, -list-map-keys, -map-type and -embedded-resource, as upstream's validation of the markers. */
function markers(s: Json, path: string, out: Cause[]): void {
  const listType = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'];
  if (listType !== undefined) {
    if (listType !== 'atomic' && listType !== 'set' && listType !== 'map') out.push(notSupported(`${path}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
    else if (s.type !== 'array') out.push(invalid(`${path}.type`, s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
  }
  const items = isJsonObject(s.items) ? s.items : undefined;
  if (listType === 'map') {
    if (!Array.isArray(keys) || keys.length === 0) out.push(required(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') out.push(invalid(`${path}.items.type`, items.type ?? '', 'must be object if parent array\'s x-kubernetes-list-type is map'));
    if (Array.isArray(keys) && items && isJsonObject(items.properties)) {
      const props = items.properties;
      keys.forEach((k, i) => {
        const p = typeof k === 'string' ? props[k] : undefined;
        if (!isJsonObject(p)) out.push(invalid(`${path}.x-kubernetes-list-map-keys[${i}]`, k, 'entries must all be names of item properties'));
        else if (!['string', 'integer', 'number', 'boolean'].includes(p.type as string) && p['x-kubernetes-int-or-string'] !== true) {
          out.push(invalid(`${path}.items.properties[${k}].type`, p.type ?? '', 'must be a scalar type if parent array\'s x-kubernetes-list-type is map'));
        }
      });
    }
  } else if (keys !== undefined) {
    out.push(forbidden(`${path}.x-kubernetes-list-map-keys`, 'must not be set if x-kubernetes-list-type is not map'));
  }
  if (listType === 'set' && items && (items.type === 'object' || items.type === 'array') && items['x-kubernetes-map-type'] !== 'atomic' && items['x-kubernetes-list-type'] !== 'atomic') {
    out.push(invalid(`${path}.items.x-kubernetes-map-type`, items['x-kubernetes-map-type'] ?? '', 'must be atomic as item of a list with x-kubernetes-list-type=set'));
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (mapType !== 'granular' && mapType !== 'atomic') out.push(notSupported(`${path}.x-kubernetes-map-type`, mapType, ['granular', 'atomic']));
    else if (s.type !== 'object') out.push(invalid(`${path}.type`, s.type ?? '', 'must be object if x-kubernetes-map-type is specified'));
  }
  if (s['x-kubernetes-embedded-resource'] === true && s.type !== 'object') {
    out.push(invalid(`${path}.type`, s.type ?? '', 'must be object if x-kubernetes-embedded-resource is true'));
  }
}

/** Upstream: at the root metadata may only restrict name and generateName (and be of type object). */
function checkRootMetadata(schema: Json, path: string, out: Cause[]): void {
  const props = isJsonObject(schema.properties) ? schema.properties : undefined;
  const meta = props?.metadata;
  if (!isJsonObject(meta)) return;
  const metaPath = `${path}.properties[metadata]`;
  if (meta.type !== undefined && meta.type !== 'object') out.push(invalid(`${metaPath}.type`, meta.type, 'must be object'));
  const allowed = new Set(['type', 'properties', 'description']);
  const extra = Object.keys(meta).some((k) => !allowed.has(k));
  const metaProps = isJsonObject(meta.properties) ? meta.properties : {};
  const badProp = Object.entries(metaProps).some(([k, v]) => (k !== 'name' && k !== 'generateName') || !isJsonObject(v) || Object.keys(v).some((x) => !['type', 'description', 'pattern', 'maxLength', 'minLength', 'enum', 'format'].includes(x)) || (v.type !== undefined && v.type !== 'string'));
  if (extra || badProp) out.push(forbidden(metaPath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
}
