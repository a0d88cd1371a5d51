import type { Cause } from '../../api/errors';
import { dns1035LabelErrors, dns1123SubdomainErrors } from '../../api/name-validation';
import type { KObject } from '../../api/types';
import { forbidden, immutable, invalid, notSupported, required, tooMany } from '../field-errors';
import { arr, rec, str, type JsonMap } from '../obj-access';
import { compileRules, hasRules } from './cel-rules';
import { validateStructuralSchema } from './structural';
import { validateClientConfig } from '../types/admission-rule-validation';

/**
 * Upstream's ValidateCustomResourceDefinition for apiextensions/v1 (messages as upstream's
 * apiextensions validation): metadata.name is `<plural>.<group>`, the group a domain with a dot,
 * scope Cluster or Namespaced, exactly one storage version, unique DNS-1035 version names, a
 * structural schema on every version, the names, printer columns, sub-resources, selectable
 * fields, conversion, and storedVersions. We also require one served version (upstream serves
 * nothing then, which no client can use).
 */

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
/** Upstream's limit on selectableFields per version. */
const MAX_SELECTABLE_FIELDS = 8;

export function validateCrd(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const names = rec(spec.names) ?? {};
  const out: Cause[] = [];
  const name = o.metadata.name ?? '';
  if (name && name !== `${str(names.plural) ?? ''}.${str(spec.group) ?? ''}`) out.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  out.push(...validateSpec(spec));
  if (spec.preserveUnknownFields === true) {
    out.push(invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  out.push(...validateNames(rec(rec(o.status)?.acceptedNames) ?? {}, 'status.acceptedNames'));
  out.push(...storedVersions(o));
  return out;
}

/** Upstream's ValidateCustomResourceDefinitionSpecUpdate: group and plural never change; scope and kind not once Established. */
export function validateCrdUpdate(o: KObject, old: KObject, established: boolean): Cause[] {
  const spec = rec(o.spec) ?? {};
  const was = rec(old.spec) ?? {};
  const out: Cause[] = [];
  if (established) {
    if (spec.scope !== was.scope) out.push(immutable('spec.scope', spec.scope));
    if (rec(spec.names)?.kind !== rec(was.names)?.kind) out.push(immutable('spec.names.kind', rec(spec.names)?.kind));
  }
  if (spec.group !== was.group) out.push(immutable('spec.group', spec.group));
  if (rec(spec.names)?.plural !== rec(was.names)?.plural) out.push(immutable('spec.names.plural', rec(spec.names)?.plural));
  return out;
}

function validateSpec(spec: JsonMap): Cause[] {
  const out: Cause[] = [];
  const group = str(spec.group) ?? '';
  if (!group) out.push(required('spec.group'));
  else if (dns1123SubdomainErrors(group).length) out.push(invalid('spec.group', group, dns1123SubdomainErrors(group).join(',')));
  else if (group.split('.').length < 2) out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const scope = str(spec.scope) ?? '';
  if (!scope) out.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') out.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  out.push(...validateVersions(arr(spec.versions)));
  const names = rec(spec.names) ?? {};
  for (const k of ['plural', 'singular', 'kind', 'listKind']) if (!str(names[k])) out.push(required(`spec.names.${k}`));
  out.push(...validateNames(names, 'spec.names'));
  out.push(...validateConversion(rec(spec.conversion), spec.preserveUnknownFields));
  return out;
}

function validateVersions(versions: unknown[]): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  let unique = true;
  versions.forEach((v, i) => {
    const ver = rec(v) ?? {};
    const path = `spec.versions[${i}]`;
    const name = str(ver.name) ?? '';
    if (ver.storage === true) storage++;
    if (ver.served === true) served++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const errs = dns1035LabelErrors(name);
    if (errs.length) out.push(invalid(`${path}.name`, name, errs.join(',')));
    const schema = rec(ver.schema)?.openAPIV3Schema;
    const structural = validateStructuralSchema(schema, `${path}.schema.openAPIV3Schema`);
    out.push(...structural);
    if (structural.length === 0 && hasRules(schema)) compileRules(schema as JsonMap, `${path}.schema.openAPIV3Schema`, out);
    out.push(...validateSubresources(rec(ver.subresources), `${path}.subresources`));
    arr(ver.additionalPrinterColumns).forEach((c, j) => out.push(...validateColumn(rec(c) ?? {}, `${path}.additionalPrinterColumns[${j}]`)));
    out.push(...validateSelectableFields(arr(ver.selectableFields), `${path}.selectableFields`));
  });
  if (!unique) out.push(invalid('spec.versions', versionsShown(versions), 'must contain unique version names'));
  if (storage !== 1) out.push(invalid('spec.versions', versionsShown(versions), 'must have exactly one version marked as storage version'));
  if (versions.length > 0 && served === 0) out.push(invalid('spec.versions', versionsShown(versions), 'must have at least one version marked as served'));
  return out;
}

/** The versions as a cause shows them: their names (upstream prints the Go structs whole). */
function versionsShown(versions: unknown[]): string {
  return `[${versions.map((v) => str(rec(v)?.name) ?? '').join(' ')}]`;
}

function validateNames(names: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  for (const k of ['plural', 'singular']) {
    const v = str(names[k]);
    if (v && dns1035LabelErrors(v).length) out.push(invalid(`${path}.${k}`, v, dns1035LabelErrors(v).join(',')));
  }
  for (const k of ['kind', 'listKind']) {
    const v = str(names[k]);
    if (v && dns1035LabelErrors(v.toLowerCase()).length) out.push(invalid(`${path}.${k}`, v, `may have mixed case, but should otherwise match: ${dns1035LabelErrors(v.toLowerCase()).join(',')}`));
  }
  arr(names.shortNames).forEach((s, i) => {
    const errs = typeof s === 'string' ? dns1035LabelErrors(s) : ['must be a string'];
    if (errs.length) out.push(invalid(`${path}.shortNames[${i}]`, s, errs.join(',')));
  });
  if (str(names.kind) && names.kind === names.listKind) out.push(invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  arr(names.categories).forEach((s, i) => {
    const errs = typeof s === 'string' ? dns1035LabelErrors(s) : ['must be a string'];
    if (errs.length) out.push(invalid(`${path}.categories[${i}]`, s, errs.join(',')));
  });
  return out;
}

function simpleJsonPath(p: unknown, path: string): Cause[] {
  if (typeof p !== 'string' || p === '') return [invalid(path, p ?? '', 'must not be empty')];
  if (!p.startsWith('.')) return [invalid(path, p, 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(sub: JsonMap | undefined, path: string): Cause[] {
  const scale = rec(sub?.scale);
  if (!scale) return [];
  const out: Cause[] = [];
  const check = (key: string, prefix: string, needed: boolean) => {
    const v = scale[key];
    if (v === undefined || v === '') {
      if (needed) out.push(required(`${path}.scale.${key}`));
      return;
    }
    const errs = simpleJsonPath(v, `${path}.scale.${key}`);
    if (errs.length) out.push(...errs);
    else if (!(v as string).startsWith(`${prefix}.`)) out.push(invalid(`${path}.scale.${key}`, v, `should be a json path under ${prefix}`));
  };
  check('specReplicasPath', '.spec', true);
  check('statusReplicasPath', '.status', true);
  check('labelSelectorPath', '.status', false);
  return out;
}

function validateColumn(c: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  if (!str(c.name)) out.push(required(`${path}.name`));
  const type = str(c.type);
  if (!type) out.push(required(`${path}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(type)) out.push(invalid(`${path}.type`, type, `must be one of ${COLUMN_TYPES.join(',')}`));
  const format = str(c.format);
  if (format && !COLUMN_FORMATS.includes(format)) out.push(invalid(`${path}.format`, format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  if (!str(c.jsonPath)) out.push(required(`${path}.jsonPath`));
  else out.push(...simpleJsonPath(c.jsonPath, `${path}.jsonPath`));
  return out;
}

function validateSelectableFields(fields: unknown[], path: string): Cause[] {
  const out: Cause[] = [];
  if (fields.length > MAX_SELECTABLE_FIELDS) out.push(tooMany(path, fields.length, MAX_SELECTABLE_FIELDS));
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const p = str(rec(f)?.jsonPath);
    const at = `${path}[${i}].jsonPath`;
    if (!p) return void out.push(required(at));
    const errs = simpleJsonPath(p, at);
    if (errs.length) return void out.push(...errs);
    if (p === '.metadata.name' || p === '.metadata.namespace') out.push(invalid(at, p, 'must not select metadata.name or metadata.namespace'));
    if (seen.has(p)) out.push(invalid(at, p, 'must be unique'));
    seen.add(p);
  });
  return out;
}

/**
 * Upstream's validateCustomResourceConversion, its messages with v1's paths: upstream validates
 * the internal type and names conversion.webhookClientConfig and conversion.conversionReviewVersions;
 * we name the fields the client wrote (webhook, webhook.clientConfig, webhook.conversionReviewVersions).
 */
function validateConversion(conv: JsonMap | undefined, preserveUnknownFields: unknown): Cause[] {
  if (!conv) return [];
  const out: Cause[] = [];
  const strategy = str(conv.strategy) ?? '';
  if (strategy !== 'None' && preserveUnknownFields === true) out.push(invalid('spec.conversion.strategy', strategy, 'must be None if spec.preserveUnknownFields is true'));
  if (!strategy) out.push(required('spec.conversion.strategy'));
  else if (strategy !== 'None' && strategy !== 'Webhook') out.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  const webhook = rec(conv.webhook);
  if (strategy === 'Webhook') {
    if (!webhook) return [...out, required('spec.conversion.webhook', 'required when strategy is set to Webhook')];
    const cc = rec(webhook.clientConfig);
    if (!cc) out.push(required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
    else out.push(...validateClientConfig('spec.conversion.webhook.clientConfig', cc));
    out.push(...reviewVersions(webhook.conversionReviewVersions));
  } else if (webhook) {
    out.push(forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  }
  return out;
}

/** Upstream's validateConversionReviewVersions (recognised versions required): v1, v1beta1. */
function reviewVersions(value: unknown): Cause[] {
  const path = 'spec.conversion.webhook.conversionReviewVersions';
  const versions = arr(value).map((v) => (typeof v === 'string' ? v : String(v)));
  const accepted = 'must include at least one of v1, v1beta1';
  if (versions.length === 0) return [required(path, accepted)];
  const out: Cause[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      out.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of dns1035LabelErrors(v)) out.push(invalid(`${path}[${i}]`, v, m));
  });
  if (!versions.some((v) => v === 'v1' || v === 'v1beta1')) out.push(invalid(path, versions, accepted));
  return out;
}

/** Upstream's ValidateCustomResourceDefinitionStoredVersions. */
function storedVersions(o: KObject): Cause[] {
  const stored = arr(rec(o.status)?.storedVersions).filter((v): v is string => typeof v === 'string');
  const versions = arr(rec(o.spec)?.versions).map((v) => rec(v) ?? {});
  if (stored.length === 0) return [invalid('status.storedVersions', stored, 'must have at least one stored version')];
  const out: Cause[] = [];
  for (const v of versions) if (v.storage === true && !stored.includes(str(v.name) ?? '')) out.push(invalid('status.storedVersions', stored, `must have the storage version ${str(v.name) ?? ''}`));
  const names = new Set(versions.map((v) => str(v.name)));
  stored.forEach((s, i) => {
    if (!names.has(s)) out.push(invalid(`status.storedVersions[${i}]`, s, 'must appear in spec.versions'));
  });
  return out;
}
