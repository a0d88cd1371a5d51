import { stringify as toYaml } from 'yaml';

/**
 * /openapi/v2 as protobuf (Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf):
 * the Swagger 2.0 document of openapi.ts written as gnostic's openapi.v2.Document, the message
 * kubectl up to 1.28 reads for apply, diff and explain (client-go proto.Unmarshal, no Kubernetes
 * envelope). Field numbers are gnostic-models' OpenAPIv2.proto (proto/gnostic/openapiv2/OpenAPIv2.proto
 * holds the subset used here). Upstream's server parses its JSON document with gnostic and
 * marshals the result; this converts our JSON document the same way, key by key: maps become
 * repeated Named* entries in document order, `x-` keys become vendor extensions whose value is
 * the YAML text of the JSON value (gnostic's Any.yaml, which kubectl parses back), and a key the
 * converter does not know is an error (a document change must come with its protobuf form).
 * Proto3: zero scalars are not written, except a bool chosen in a oneof.
 */

type Json = Record<string, unknown>;

/** Upstream's media types: the deprecated `@` form client-go sends, and the form upstream answers with. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

/** The protobuf form of a Swagger 2.0 document. */
export function openApiV2Protobuf(doc: Json): Buffer {
  return Buffer.concat(message(doc, DOCUMENT, 'Document'));
}

// ---- wire helpers: each returns encoded fields (tag and value) ----

function varint(v: number): number[] {
  const out: number[] = [];
  while (v > 0x7f) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

function sub(no: number, parts: Buffer[]): Buffer {
  const value = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([...varint(no * 8 + 2), ...varint(value.length)]), value]);
}

function str(no: number, s: string): Buffer[] {
  return s === '' ? [] : [sub(no, [Buffer.from(s, 'utf8')])];
}

function bool(no: number, b: boolean, always = false): Buffer[] {
  return b || always ? [Buffer.from([...varint(no * 8), b ? 1 : 0])] : [];
}

function int64(no: number, n: number, at: string): Buffer[] {
  if (n < 0 || !Number.isSafeInteger(n)) throw new Error(`openapi v2 protobuf: ${at} (${n}) is not a non-negative integer`);
  return n === 0 ? [] : [Buffer.from([...varint(no * 8), ...varint(n)])];
}

function double(no: number, n: number): Buffer[] {
  if (n === 0) return [];
  const b = Buffer.alloc(8);
  b.writeDoubleLE(n);
  return [Buffer.concat([Buffer.from(varint(no * 8 + 1)), b])];
}

/** gnostic's Any {yaml 2}: the value as YAML text. */
function any(no: number, v: unknown): Buffer {
  return sub(no, str(2, toYaml(v)));
}

// ---- what each key of each object becomes ----

type Write = (v: unknown, at: string) => Buffer[];

interface Table {
  /** Each known key's writer (it writes its own field number). */
  keys: Record<string, Write>;
  /** The field number of the `x-` vendor extensions (repeated NamedAny), when the message has them. */
  ext?: number;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The fields of obj as the message table describes, in field number order (as Go writes them). */
function message(obj: unknown, table: Table, at: string): Buffer[] {
  if (!isObject(obj)) throw new Error(`openapi v2 protobuf: ${at} is not an object`);
  const fields: Array<[number, Buffer[]]> = [];
  for (const [key, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    const where = `${at}.${key}`;
    if (key.startsWith('x-') && table.ext !== undefined) {
      fields.push([table.ext, [sub(table.ext, [...str(1, key), any(2, v)])]]);
      continue;
    }
    const w = table.keys[key];
    if (!w) throw new Error(`openapi v2 protobuf: ${where} has no field in gnostic's message`);
    const parts = w(v, where);
    fields.push([parts.length ? fieldNo(parts[0]) : 0, parts]);
  }
  // A stable sort: repeated fields keep the document's order.
  fields.sort((a, b) => a[0] - b[0]);
  return fields.flatMap(([, parts]) => parts);
}

/** The field number of an encoded field (its tag varint). */
function fieldNo(b: Buffer): number {
  let v = 0;
  for (let i = 0, mul = 1; i < b.length; i++, mul *= 128) {
    v += (b[i] & 0x7f) * mul;
    if (b[i] < 0x80) break;
  }
  return Math.floor(v / 8);
}

const expect = (ok: boolean, at: string, what: string): void => {
  if (!ok) throw new Error(`openapi v2 protobuf: ${at} is not ${what}`);
};

const S = (no: number): Write => (v, at) => (expect(typeof v === 'string', at, 'a string'), str(no, v as string));
const B = (no: number): Write => (v, at) => (expect(typeof v === 'boolean', at, 'a boolean'), bool(no, v as boolean));
const I = (no: number): Write => (v, at) => (expect(typeof v === 'number', at, 'a number'), int64(no, v as number, at));
const D = (no: number): Write => (v, at) => (expect(typeof v === 'number', at, 'a number'), double(no, v as number));
const A = (no: number): Write => (v) => [any(no, v)];
const Strings = (no: number): Write => (v, at) => {
  expect(Array.isArray(v) && v.every((x) => typeof x === 'string'), at, 'a list of strings');
  return (v as string[]).map((s) => sub(no, [Buffer.from(s, 'utf8')]));
};
const Anys = (no: number): Write => (v, at) => (expect(Array.isArray(v), at, 'a list'), (v as unknown[]).map((x) => any(no, x)));
const M = (no: number, table: () => Table): Write => (v, at) => [sub(no, message(v, table(), at))];
const Ms = (no: number, table: () => Table): Write => (v, at) => {
  expect(Array.isArray(v), at, 'a list');
  return (v as unknown[]).map((x, i) => sub(no, message(x, table(), `${at}[${i}]`)));
};
/** A JSON object of named values: repeated Named{name 1, value 2} entries as field `entry` of a message that is field `no`. */
const Named = (no: number, entry: number, value: Write): Write => (v, at) => {
  expect(isObject(v), at, 'an object');
  return [sub(no, namedEntries(v as Json, entry, value, at))];
};

function namedEntries(v: Json, entry: number, value: Write, at: string): Buffer[] {
  return Object.entries(v).map(([name, x]) => sub(entry, [...str(1, name), ...value(x, `${at}.${name}`)]));
}

// gnostic openapi.v2.Schema.
const SCHEMA: Table = {
  ext: 31,
  keys: {
    $ref: S(1),
    format: S(2),
    title: S(3),
    description: S(4),
    default: A(5),
    multipleOf: D(6),
    maximum: D(7),
    exclusiveMaximum: B(8),
    minimum: D(9),
    exclusiveMinimum: B(10),
    maxLength: I(11),
    minLength: I(12),
    pattern: S(13),
    maxItems: I(14),
    minItems: I(15),
    uniqueItems: B(16),
    maxProperties: I(17),
    minProperties: I(18),
    required: Strings(19),
    enum: Anys(20),
    // AdditionalPropertiesItem: oneof {schema 1, boolean 2}.
    additionalProperties: (v, at) => [sub(21, typeof v === 'boolean' ? bool(2, v, true) : [sub(1, message(v, SCHEMA, at))])],
    // TypeItem {repeated value 1}: one type or several.
    type: (v, at) => [sub(22, Strings(1)(typeof v === 'string' ? [v] : v, at))],
    // ItemsItem {repeated schema 1}: one schema or a tuple of them.
    items: (v, at) => [sub(23, (Array.isArray(v) ? v : [v]).map((x, i) => sub(1, message(x, SCHEMA, `${at}[${i}]`))))],
    allOf: Ms(24, () => SCHEMA),
    // Properties {repeated NamedSchema additional_properties 1}.
    properties: Named(25, 1, (v, at) => [sub(2, message(v, SCHEMA, at))]),
    discriminator: S(26),
    readOnly: B(27),
    example: A(30),
  },
};

/**
 * A parameter: ParametersItem oneof {parameter 1: Parameter, json_reference 2}; Parameter oneof
 * {body_parameter 1, non_body_parameter 2}; NonBodyParameter oneof {header 1, form data 2,
 * query 3, path 4} sub-schemas.
 */
function parameter(v: unknown, at: string): Buffer[] {
  expect(isObject(v), at, 'an object');
  const p = v as Json;
  if (typeof p.$ref === 'string') return [sub(2, message(p, JSON_REFERENCE, at))];
  if (p.in === 'body') return [sub(1, [sub(1, message(p, BODY_PARAMETER, at))])];
  const which = { header: 1, formData: 2, query: 3, path: 4 }[String(p.in)];
  if (which === undefined) throw new Error(`openapi v2 protobuf: ${at}.in is not body, header, formData, query or path`);
  return [sub(1, [sub(2, [sub(which, message(p, which === 1 || which === 4 ? HEADER_OR_PATH_PARAMETER : QUERY_OR_FORM_PARAMETER, at))])])];
}

const JSON_REFERENCE: Table = { keys: { $ref: S(1), description: S(2) } };

const BODY_PARAMETER: Table = { ext: 6, keys: { description: S(1), name: S(2), in: S(3), required: B(4), schema: M(5, () => SCHEMA) } };

/** HeaderParameterSubSchema and PathParameterSubSchema share their numbers. */
const HEADER_OR_PATH_PARAMETER: Table = {
  ext: 22,
  keys: { required: B(1), in: S(2), description: S(3), name: S(4), type: S(5), format: S(6), collectionFormat: S(8), default: A(9), pattern: S(16), uniqueItems: B(19), enum: Anys(20) },
};

/** QueryParameterSubSchema and FormDataParameterSubSchema share theirs (allow_empty_value 5 shifts the rest by one). */
const QUERY_OR_FORM_PARAMETER: Table = {
  ext: 23,
  keys: {
    required: B(1),
    in: S(2),
    description: S(3),
    name: S(4),
    allowEmptyValue: B(5),
    type: S(6),
    format: S(7),
    collectionFormat: S(9),
    default: A(10),
    pattern: S(17),
    uniqueItems: B(20),
    enum: Anys(21),
  },
};

// Response {description 1, schema 2: SchemaItem oneof {schema 1, file_schema 2}, headers 3, examples 4, vendor_extension 5}.
const RESPONSE: Table = { ext: 5, keys: { description: S(1), schema: (v, at) => [sub(2, [sub(1, message(v, SCHEMA, at))])] } };

/** Responses {response_code 1: repeated NamedResponseValue, vendor_extension 2}; a value is ResponseValue oneof {response 1, json_reference 2}. */
function responses(v: unknown, at: string): Buffer[] {
  expect(isObject(v), at, 'an object');
  const codes: Json = {};
  const ext: Buffer[] = [];
  for (const [k, x] of Object.entries(v as Json)) {
    if (k.startsWith('x-')) ext.push(sub(2, [...str(1, k), any(2, x)]));
    else codes[k] = x;
  }
  const value: Write = (x, where) => [sub(2, isObject(x) && typeof x.$ref === 'string' ? [sub(2, message(x, JSON_REFERENCE, where))] : [sub(1, message(x, RESPONSE, where))])];
  return [sub(9, [...namedEntries(codes, 1, value, at), ...ext])];
}

const OPERATION: Table = {
  ext: 13,
  keys: {
    tags: Strings(1),
    summary: S(2),
    description: S(3),
    operationId: S(5),
    produces: Strings(6),
    consumes: Strings(7),
    parameters: (v, at) => (expect(Array.isArray(v), at, 'a list'), (v as unknown[]).map((p, i) => sub(8, parameter(p, `${at}[${i}]`)))),
    responses,
    schemes: Strings(10),
    deprecated: B(11),
  },
};

const PATH_ITEM: Table = {
  ext: 10,
  keys: {
    $ref: S(1),
    get: M(2, () => OPERATION),
    put: M(3, () => OPERATION),
    post: M(4, () => OPERATION),
    delete: M(5, () => OPERATION),
    options: M(6, () => OPERATION),
    head: M(7, () => OPERATION),
    patch: M(8, () => OPERATION),
    parameters: (v, at) => (expect(Array.isArray(v), at, 'a list'), (v as unknown[]).map((p, i) => sub(9, parameter(p, `${at}[${i}]`)))),
  },
};

/** Paths {vendor_extension 1, path 2: repeated NamedPathItem}. */
function paths(v: unknown, at: string): Buffer[] {
  expect(isObject(v), at, 'an object');
  const ext: Buffer[] = [];
  const items: Buffer[] = [];
  for (const [k, x] of Object.entries(v as Json)) {
    if (k.startsWith('x-')) ext.push(sub(1, [...str(1, k), any(2, x)]));
    else items.push(sub(2, [...str(1, k), sub(2, message(x, PATH_ITEM, `${at}.${k}`))]));
  }
  return [sub(8, [...ext, ...items])];
}

const INFO: Table = { ext: 7, keys: { title: S(1), version: S(2), description: S(3), termsOfService: S(4) } };

const DOCUMENT: Table = {
  ext: 16,
  keys: {
    swagger: S(1),
    info: M(2, () => INFO),
    host: S(3),
    basePath: S(4),
    schemes: Strings(5),
    consumes: Strings(6),
    produces: Strings(7),
    paths,
    // Definitions {repeated NamedSchema additional_properties 1}.
    definitions: Named(9, 1, (v, at) => [sub(2, message(v, SCHEMA, at))]),
  },
};

/**
 * What /openapi/v2 answers for an Accept header, as upstream's handler picks it: the clauses by
 * quality (then the more specific first), each tried against JSON, the deprecated protobuf name
 * and the protobuf name in that order (so `*` and `*\/*` get JSON); undefined: 406.
 */
export function openApiV2MediaType(accept: string | undefined): 'json' | 'protobuf' | undefined {
  const offered: Array<[string, 'json' | 'protobuf']> = [
    ['json', 'json'],
    [OPENAPI_V2_PROTOBUF_DEPRECATED.slice('application/'.length), 'protobuf'],
    [OPENAPI_V2_PROTOBUF.slice('application/'.length), 'protobuf'],
  ];
  const clauses = (accept && accept.trim() !== '' ? accept : '*/*')
    .split(',')
    .map((part) => {
      const [range, ...params] = part.trim().split(';');
      const [type = '', subtype = '*'] = range.trim().toLowerCase().split('/');
      const q = params.map((p) => p.trim().split('=')).find(([k]) => k.trim() === 'q');
      const quality = q ? Number(q[1]) : 1;
      return { type: type === '*' ? '*' : type, subtype, q: Number.isFinite(quality) ? quality : 0 };
    })
    .filter((c) => c.type !== '' && c.q > 0);
  const specificity = (c: { type: string; subtype: string }) => (c.type !== '*' ? 2 : 0) + (c.subtype !== '*' ? 1 : 0);
  clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a));
  for (const c of clauses) {
    if (c.type !== 'application' && c.type !== '*') continue;
    const hit = offered.find(([subtype]) => c.subtype === '*' || c.subtype === subtype);
    if (hit) return hit[1];
  }
  return undefined;
}
