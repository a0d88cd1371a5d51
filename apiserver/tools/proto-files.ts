import type { ObjectSchema, Schema } from '../api/schema';
import { describesField } from '../registry/schema-builders';
import { makeBuiltinTypes } from '../registry/builtin';
import { deleteOptionsSchema, listSchemaOf, statusSchema } from '../registry/meta-schemas';
import { scaleSchema } from '../registry/types/autoscaling-scale';
import { evictionSchema } from '../registry/types/poddisruptionbudgets';
import { selfSubjectReviewSchema } from '../registry/types/authentication-selfsubjectreviews';
import { tokenReviewSchema } from '../registry/types/authentication-tokenreviews';
import { tokenRequestSchema } from '../registry/types/serviceaccount-token-request';

/**
 * The .proto files under proto/k8s.io/, generated from the resource schemas (`npm run proto`):
 * upstream's packages, message names and field numbers (the wire contract the codec speaks), our
 * own comments. A unit test fails when the committed files differ from what this generates.
 *
 * Only upstream's v1 packages are written; the older versions served with the same schema
 * (TokenReview v1beta1, SelfSubjectReview v1beta1/v1alpha1, SubjectAccessReview v1beta1) have the
 * same field numbers, so one message describes them all on the wire.
 */

const PACKAGES = [
  'k8s.io.api.admissionregistration.v1',
  'k8s.io.api.admissionregistration.v1alpha1',
  'k8s.io.api.admissionregistration.v1beta1',
  'k8s.io.api.apps.v1',
  'k8s.io.api.authentication.v1',
  'k8s.io.api.authorization.v1',
  'k8s.io.api.autoscaling.v1',
  'k8s.io.api.autoscaling.v2',
  'k8s.io.api.batch.v1',
  'k8s.io.api.certificates.v1',
  'k8s.io.api.coordination.v1',
  'k8s.io.api.core.v1',
  'k8s.io.api.discovery.v1',
  'k8s.io.api.events.v1',
  'k8s.io.api.networking.v1',
  'k8s.io.api.node.v1',
  'k8s.io.api.policy.v1',
  'k8s.io.api.rbac.v1',
  'k8s.io.api.scheduling.v1',
  'k8s.io.api.storage.v1',
  'k8s.io.apimachinery.pkg.api.resource',
  'k8s.io.apimachinery.pkg.apis.meta.v1',
  'k8s.io.apimachinery.pkg.runtime',
  'k8s.io.apimachinery.pkg.util.intstr',
  'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1',
  'k8s.io.metrics.pkg.apis.metrics.v1beta1',
];

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const RUNTIME = 'k8s.io.apimachinery.pkg.runtime';

interface FieldDecl {
  label: 'optional' | 'repeated' | '';
  type: string;
  name: string;
  no: number;
  comment?: string;
}

interface MessageDecl {
  name: string;
  comment?: string;
  fields: FieldDecl[];
}

/**
 * Messages whose JSON form is a scalar or raw JSON, so no schema object describes their fields:
 * written as upstream defines them.
 */
const FIXED: MessageDecl[] = [
  timestamp(`${META}.Time`, 'A time in whole seconds since the Unix epoch (JSON: RFC 3339); nanos are written 0 and ignored.'),
  timestamp(`${META}.MicroTime`, 'A time with microseconds (JSON: RFC 3339 with six fraction digits).'),
  { name: `${META}.Duration`, comment: 'A duration in nanoseconds (JSON: Go\'s duration text, "15s").', fields: [{ label: 'optional', type: 'int64', name: 'duration', no: 1 }] },
  {
    name: `${META}.FieldsV1`,
    comment: 'A managed-fields set: the JSON text of its f:<name> tree.',
    fields: [{ label: 'optional', type: 'bytes', name: 'Raw', no: 1 }],
  },
  {
    name: `${META}.WatchEvent`,
    comment: 'One event of a watch stream (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR); object holds the enveloped object.',
    fields: [
      { label: 'optional', type: 'string', name: 'type', no: 1 },
      { label: 'optional', type: `.${RUNTIME}.RawExtension`, name: 'object', no: 2 },
    ],
  },
  {
    name: `${RUNTIME}.RawExtension`,
    comment: 'An embedded object: its serialized bytes (JSON text, or the protobuf envelope in a watch event).',
    fields: [{ label: 'optional', type: 'bytes', name: 'raw', no: 1 }],
  },
  {
    name: `${RUNTIME}.TypeMeta`,
    comment: 'The type of an enveloped object.',
    fields: [
      { label: 'optional', type: 'string', name: 'apiVersion', no: 1 },
      { label: 'optional', type: 'string', name: 'kind', no: 2 },
    ],
  },
  {
    name: `${RUNTIME}.Unknown`,
    comment: 'The envelope of every protobuf body, after the 4-byte magic "k8s\\0": the type and the object\'s message bytes.',
    fields: [
      { label: 'optional', type: 'TypeMeta', name: 'typeMeta', no: 1 },
      { label: 'optional', type: 'bytes', name: 'raw', no: 2 },
      { label: 'optional', type: 'string', name: 'contentEncoding', no: 3 },
      { label: 'optional', type: 'string', name: 'contentType', no: 4 },
    ],
  },
  {
    name: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
    comment: 'A resource quantity such as "100m" or "1Gi", in its canonical string form.',
    fields: [{ label: 'optional', type: 'string', name: 'string', no: 1 }],
  },
  {
    name: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
    comment: 'An integer or a string: type 0 reads intVal, type 1 reads strVal.',
    fields: [
      { label: 'optional', type: 'int64', name: 'type', no: 1 },
      { label: 'optional', type: 'int32', name: 'intVal', no: 2 },
      { label: 'optional', type: 'string', name: 'strVal', no: 3 },
    ],
  },
];

function timestamp(name: string, comment: string): MessageDecl {
  return {
    name,
    comment,
    fields: [
      { label: 'optional', type: 'int64', name: 'seconds', no: 1 },
      { label: 'optional', type: 'int32', name: 'nanos', no: 2 },
    ],
  };
}

/** The schemas every served message is reached from. */
function roots(): ObjectSchema[] {
  const out: ObjectSchema[] = [statusSchema, deleteOptionsSchema, evictionSchema, scaleSchema, tokenRequestSchema, tokenReviewSchema, selfSubjectReviewSchema];
  for (const t of makeBuiltinTypes()) {
    out.push(t.schema);
    // The review kinds are created, never listed: upstream has no list messages for them.
    if (!t.kind.endsWith('Review')) out.push(listSchemaOf(t.schema));
  }
  return out;
}

const pkgOf = (name: string): string => name.slice(0, name.lastIndexOf('.'));
const shortOf = (name: string): string => name.slice(name.lastIndexOf('.') + 1);

/** Collects every message reachable from the roots, checking that one name means one definition. */
function collect(): Map<string, MessageDecl> {
  const messages = new Map<string, MessageDecl>(FIXED.map((m) => [m.name, m]));
  const seen = new Map<string, string>();
  const visited = new Set<ObjectSchema>();
  const visit = (s: ObjectSchema): void => {
    const proto = s.proto!;
    if (visited.has(s) || !PACKAGES.includes(pkgOf(proto.name))) return;
    visited.add(s);
    const decl = declare(s, messages, visit);
    const shape = JSON.stringify(decl.fields.map((f) => [f.label, f.type, f.name, f.no]));
    const before = seen.get(proto.name);
    if (before !== undefined && before !== shape) throw new Error(`two schemas define ${proto.name} differently`);
    if (before === undefined || (!messages.get(proto.name)?.comment && decl.comment)) messages.set(proto.name, decl);
    seen.set(proto.name, shape);
  };
  for (const r of roots()) visit(r);
  return messages;
}

function declare(s: ObjectSchema, messages: Map<string, MessageDecl>, visit: (s: ObjectSchema) => void): MessageDecl {
  const proto = s.proto!;
  const pkg = pkgOf(proto.name);
  const fields: FieldDecl[] = [];
  for (const [key, no] of Object.entries(proto.fields)) {
    const prop = s.properties[key];
    const { label, type } = typeOf(prop, pkg, `${proto.name}.${key}`, messages, visit);
    fields.push({ label, type, name: proto.names?.[key] ?? key, no, comment: prop.description });
  }
  for (const { no, schema, name } of proto.inline ?? []) {
    visit(schema);
    const msg = schema.proto!.name;
    const short = shortOf(msg);
    fields.push({ label: 'optional', type: ref(msg, pkg), name: name ?? short[0].toLowerCase() + short.slice(1), no, comment: 'Embedded: its fields are inline in the JSON form.' });
  }
  // A described() copy carries the text of the field holding it: the message keeps its own (or none).
  return { name: proto.name, comment: describesField(s) ? undefined : s.description, fields };
}

function typeOf(s: Schema, pkg: string, where: string, messages: Map<string, MessageDecl>, visit: (s: ObjectSchema) => void): { label: FieldDecl['label']; type: string } {
  if (s.type === 'array') {
    if (s.wrapper) {
      const item = typeOf(s.items, pkgOf(s.wrapper), where, messages, visit).type;
      messages.set(s.wrapper, { name: s.wrapper, comment: 'A list of strings, wrapped so that it can be a map value.', fields: [{ label: 'repeated', type: item, name: 'items', no: 1 }] });
      return { label: 'optional', type: ref(s.wrapper, pkg) };
    }
    return { label: 'repeated', type: typeOf(s.items, pkg, where, messages, visit).type };
  }
  if (s.type === 'map') return { label: '', type: `map<string, ${typeOf(s.values, pkg, where, messages, visit).type}>` };
  return { label: 'optional', type: scalarType(s, pkg, where, visit) };
}

function scalarType(s: Schema, pkg: string, where: string, visit: (s: ObjectSchema) => void): string {
  switch (s.type) {
    case 'object':
      if (!s.proto) throw new Error(`${where}: an object without an upstream message`);
      visit(s);
      return ref(s.proto.name, pkg);
    case 'any':
      if (!s.raw) throw new Error(`${where}: any JSON without a FieldsV1/RawExtension message`);
      return ref(s.raw, pkg);
    case 'string':
      if (s.format === 'duration') return ref(`${META}.Duration`, pkg);
      return s.format === 'byte' ? 'bytes' : 'string';
    case 'integer':
      if (s.format !== 'int32' && s.format !== 'int64') throw new Error(`${where}: an integer needs int32() or int64()`);
      return s.format;
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'int-or-string':
      return ref('k8s.io.apimachinery.pkg.util.intstr.IntOrString', pkg);
    case 'quantity':
      return ref('k8s.io.apimachinery.pkg.api.resource.Quantity', pkg);
    case 'date-time':
      return ref(`${META}.${s.format === 'micro-time' ? 'MicroTime' : 'Time'}`, pkg);
    default:
      throw new Error(`${where}: no protobuf type`);
  }
}

/** A message reference as upstream writes it: bare in its own package, fully qualified elsewhere. */
function ref(name: string, pkg: string): string {
  return pkgOf(name) === pkg ? shortOf(name) : `.${name}`;
}

/** k8s.io.api.core.v1 -> k8s.io/api/core/v1, upstream's Go import path (kube_aggregator is the module k8s.io/kube-aggregator). */
const goPackage = (pkg: string): string => `k8s.io/${pkg.slice('k8s.io.'.length).replace(/\./g, '/').replace(/^kube_aggregator\//, 'kube-aggregator/')}`;
const pathOf = (pkg: string): string => `proto/${goPackage(pkg)}/generated.proto`;

function comment(text: string | undefined, indent: string): string {
  return text ? `${indent}// ${text.replace(/\n/g, ' ')}\n` : '';
}

function render(pkg: string, messages: MessageDecl[]): string {
  const imports = new Set<string>();
  for (const m of messages) {
    for (const f of m.fields) {
      for (const used of f.type.match(/\.k8s\.io\.[\w.]+/g) ?? []) imports.add(pkgOf(used.slice(1)));
    }
  }
  let out = '// Generated by `npm run proto` from the resource schemas (apiserver/registry); do not edit.\n';
  out += '// Package, message names and field numbers are upstream Kubernetes\' wire contract; comments are ours.\n';
  out += 'syntax = "proto2";\n\n';
  out += `package ${pkg};\n\n`;
  for (const i of [...imports].filter((i) => i !== pkg).sort()) out += `import "${pathOf(i).slice('proto/'.length)}";\n`;
  if (imports.size) out += '\n';
  out += `option go_package = "${goPackage(pkg)}";\n`;
  for (const m of [...messages].sort((a, b) => shortOf(a.name).localeCompare(shortOf(b.name)))) {
    out += `\n${comment(m.comment, '')}message ${shortOf(m.name)} {\n`;
    m.fields.forEach((f, i) => {
      if (i > 0 && f.comment) out += '\n';
      out += comment(f.comment, '  ');
      out += `  ${f.label ? `${f.label} ` : ''}${f.type} ${f.name} = ${f.no};\n`;
    });
    out += '}\n';
  }
  return out;
}

/** Every generated file: its path from the repository root and its content. */
export function protoFiles(): Array<{ path: string; content: string }> {
  const byPkg = new Map<string, MessageDecl[]>();
  for (const m of collect().values()) {
    const pkg = pkgOf(m.name);
    if (!PACKAGES.includes(pkg)) throw new Error(`${m.name} is outside the generated packages`);
    byPkg.set(pkg, [...(byPkg.get(pkg) ?? []), m]);
  }
  return PACKAGES.map((pkg) => ({ path: pathOf(pkg), content: render(pkg, byPkg.get(pkg) ?? []) }));
}
