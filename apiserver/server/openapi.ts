import { createHash } from 'node:crypto';
import type { Schema } from '../api/schema';
import type { ResourceType } from '../registry/resource-type';

/**
 * OpenAPI documents generated from the resource schemas: /openapi/v2 (Swagger 2.0, JSON) and
 * /openapi/v3 (an index plus one document per group/version). kubectl reads the v3 documents to
 * learn that PATCH accepts fieldValidation (then it validates server-side) and for explain.
 */

type Json = Record<string, unknown>;

function defName(t: ResourceType): string {
  const g = t.group || 'core';
  return `${g.split('.').reverse().join('.')}.${t.version}.${t.kind}`;
}

/** The OpenAPI schema of s with its description (kubectl explain prints it for every field, of every type). */
function toOpenApi(s: Schema): Json {
  const out = shapeOf(s);
  return s.description ? { description: s.description, ...out } : out;
}

function shapeOf(s: Schema): Json {
  switch (s.type) {
    case 'object':
      return {
        type: 'object',
        properties: Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toOpenApi(v)])),
        ...(s.required?.length ? { required: [...s.required] } : {}),
        ...(s.atomic ? { 'x-kubernetes-map-type': 'atomic' } : {}),
        ...(s.retainKeys ? { 'x-kubernetes-patch-strategy': 'retainKeys' } : {}),
      };
    case 'map':
      return { type: 'object', additionalProperties: toOpenApi(s.values), ...(s.atomic ? { 'x-kubernetes-map-type': 'atomic' } : {}) };
    case 'array': {
      const a: Json = { type: 'array', items: toOpenApi(s.items) };
      if (s.listType) a['x-kubernetes-list-type'] = s.listType;
      if (s.listType === 'map' && s.mapKeys?.length) {
        a['x-kubernetes-list-map-keys'] = [...s.mapKeys];
        a['x-kubernetes-patch-merge-key'] = s.mapKeys[0];
        a['x-kubernetes-patch-strategy'] = 'merge';
      }
      if (s.listType === 'set') a['x-kubernetes-patch-strategy'] = 'merge';
      return a;
    }
    case 'int-or-string':
      return { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true };
    case 'quantity':
      return { type: 'string', format: 'quantity' };
    case 'date-time':
      return { type: 'string', format: 'date-time' };
    case 'any':
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    default:
      // int32/int64/byte/double, as upstream's OpenAPI writes them (byte: base64 in JSON).
      return { type: s.type, ...(s.format ? { format: s.format } : {}), ...(s.enum ? { enum: [...s.enum] } : {}), ...(s.default !== undefined ? { default: s.default } : {}) };
  }
}

/** A custom resource's own schema, with the envelope every kind has: apiVersion, kind and the standard metadata. */
function published(t: ResourceType, v3: boolean): Json {
  const own = (v3 ? structuredClone(t.openApi!) : swagger2(t.openApi!)) as Json;
  const props = { ...((own.properties as Json | undefined) ?? {}) };
  for (const k of ['apiVersion', 'kind', 'metadata']) {
    const s = t.schema.properties[k];
    if (s) props[k] = toOpenApi(s);
  }
  return { ...own, type: 'object', properties: props };
}

/**
 * An OpenAPI v3 schema as Swagger 2.0 can say it, as upstream publishes CRDs in /openapi/v2:
 * nullable, anyOf, oneOf and not are left out (v2 has no such keywords).
 */
function swagger2(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(swagger2);
  if (typeof v !== 'object' || v === null) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (k === 'nullable' || k === 'anyOf' || k === 'oneOf' || k === 'not') continue;
    // Property names are data, not keywords: only the values below them are converted.
    out[k] = k === 'properties' && typeof x === 'object' && x !== null ? Object.fromEntries(Object.entries(x as Json).map(([p, s]) => [p, swagger2(s)])) : swagger2(x);
  }
  return out;
}

function gvk(t: ResourceType): Json {
  return { group: t.group, version: t.version, kind: t.kind };
}

const WRITE_PARAMS: Array<[string, string]> = [
  ['dryRun', 'All: validate and default without persisting'],
  ['fieldManager', 'name of the actor making the change'],
  ['fieldValidation', 'Ignore, Warn (default) or Strict handling of unknown and duplicate fields'],
];

/** The query parameters of writes: Swagger 2.0 types them inline, OpenAPI 3 with a schema (as upstream's documents). */
function writeParams(v3: boolean): Json[] {
  return WRITE_PARAMS.map(([name, description]) =>
    v3 ? { name, in: 'query', description, schema: { type: 'string', uniqueItems: true } } : { name, in: 'query', description, type: 'string', uniqueItems: true },
  );
}

function itemPath(t: ResourceType): string {
  const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  return t.namespaced ? `${base}/namespaces/{namespace}/${t.resource}/{name}` : `${base}/${t.resource}/{name}`;
}

function collectionPath(t: ResourceType): string {
  return itemPath(t).replace(/\/\{name\}$/, '');
}

function paths(types: readonly ResourceType[], v3: boolean): Json {
  const out: Json = {};
  for (const t of types) {
    const ref = v3 ? `#/components/schemas/${defName(t)}` : `#/definitions/${defName(t)}`;
    const body = v3 ? { requestBody: { content: { '*/*': { schema: { $ref: ref } } } } } : { parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: ref } }, ...writeParams(false)] };
    const params = v3 ? { parameters: writeParams(true) } : {};
    const ext = { 'x-kubernetes-group-version-kind': gvk(t) };
    out[collectionPath(t)] = {
      get: { operationId: `list${t.kind}`, 'x-kubernetes-action': 'list', ...ext, responses: { '200': { description: 'OK' } } },
      post: { operationId: `create${t.kind}`, 'x-kubernetes-action': 'post', ...ext, ...body, ...params, responses: { '201': { description: 'Created' } } },
    };
    out[itemPath(t)] = {
      get: { operationId: `read${t.kind}`, 'x-kubernetes-action': 'get', ...ext, responses: { '200': { description: 'OK' } } },
      put: { operationId: `replace${t.kind}`, 'x-kubernetes-action': 'put', ...ext, ...body, ...params, responses: { '200': { description: 'OK' } } },
      patch: { operationId: `patch${t.kind}`, 'x-kubernetes-action': 'patch', ...ext, parameters: writeParams(v3), responses: { '200': { description: 'OK' } } },
      delete: { operationId: `delete${t.kind}`, 'x-kubernetes-action': 'delete', ...ext, responses: { '200': { description: 'OK' } } },
    };
  }
  return out;
}

function definitions(types: readonly ResourceType[], v3: boolean): Json {
  const out: Json = {};
  for (const t of types) out[defName(t)] = { ...(t.openApi ? published(t, v3) : toOpenApi(t.schema)), 'x-kubernetes-group-version-kind': [gvk(t)] };
  return out;
}

export function openApiV2(types: readonly ResourceType[], version: string): Json {
  return { swagger: '2.0', info: { title: 'svc-apiserver', version }, paths: paths(types, false), definitions: definitions(types, false) };
}

function gvKey(t: ResourceType): string {
  return t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`;
}

/** The /openapi/v3 index: one entry per group/version with a content hash, as upstream serves it. */
export function openApiV3Index(types: readonly ResourceType[]): Json {
  const keys = [...new Set(types.map(gvKey))];
  const p: Json = {};
  for (const k of keys) {
    const hash = createHash('sha512').update(JSON.stringify(openApiV3(types, k, ''))).digest('hex').slice(0, 32).toUpperCase();
    p[k] = { serverRelativeURL: `/openapi/v3/${k}?hash=${hash}` };
  }
  return { paths: p };
}

export function openApiV3(types: readonly ResourceType[], key: string, version: string): Json | undefined {
  const ts = types.filter((t) => gvKey(t) === key);
  if (ts.length === 0) return undefined;
  return { openapi: '3.0.0', info: { title: 'svc-apiserver', version }, paths: paths(ts, true), components: { schemas: definitions(ts, true) } };
}
