import { isDeepStrictEqual } from 'node:util';
import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { isJsonObject } from '../../patch/json-value';
import { arr, rec, str, type JsonMap } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { ageColumn, translateTimestampSince, type Now } from '../table';
import { WebhookConverter, type ConversionTransport } from './conversion-webhook';
import { compileRules, evaluateRules, hasRules } from './cel-rules';
import { applyDefaults, hasDefaults } from './defaulting';
import { evalJsonPath } from './json-path';
import { validateCustomObject } from './object-validation';
import { customResourceSchema } from './schema-convert';

/**
 * The ResourceTypes a CustomResourceDefinition serves: one per served version, built from its
 * names, scope, schema (customResourceSchema for the generic machinery; the JSON schema itself
 * for defaulting and value validation), sub-resources, printer columns and selectable fields.
 * Every version reads and writes the same storage keys (/<group>/<plural>/...); objects are stored
 * in the storage version (conversion None: only apiVersion differs), so the other versions are
 * views of it (storedAs) that rewrite apiVersion on the way in and out, as upstream's nop converter.
 * With the Webhook strategy every version has the CRD's WebhookConverter instead: the store converts
 * what it reads to the version asked for and what it writes to the storage version through it.
 */

/** One served version of a CRD. */
export interface CustomResourceVersion {
  type: ResourceType;
}

export function customResourceTypes(crd: KObject, now: Now = Date.now, conversion?: ConversionTransport): CustomResourceVersion[] {
  const spec = rec(crd.spec) ?? {};
  const names = rec(spec.names) ?? {};
  const group = str(spec.group) ?? '';
  const plural = str(names.plural) ?? '';
  const versions = arr(spec.versions).map((v) => rec(v) ?? {});
  const storage = versions.find((v) => v.storage === true);
  const storageVersion = str(storage?.name) ?? '';
  const storedApi = `${group}/${storageVersion}`;
  // Webhook: every version converts through one converter (objects stored at an older storage
  // version are converted too). Without a transport (tests, tools) only the storage version is
  // served, whose objects need no conversion.
  const webhook = rec(spec.conversion)?.strategy === 'Webhook';
  const converter = webhook && conversion ? new WebhookConverter(crd, storedApi, conversion) : undefined;
  return versions
    .filter((v) => v.served === true && (!webhook || converter || v === storage))
    .map((v) => {
      const version = str(v.name) ?? '';
      const type = versionType(spec, names, v, now);
      if (converter) type.converter = converter;
      else if (version !== storageVersion) {
        type.storedAs = {
          group,
          resource: plural,
          fromStorage: (o) => structuredClone(o),
          toStorage: (o) => ({ ...o, apiVersion: storedApi }),
        };
      }
      // The same signals as a deprecated built-in; upstream's default text: "<group>/<version> <Kind> is deprecated".
      if (v.deprecated === true) type.deprecation = { warning: str(v.deprecationWarning) ?? `${group}/${version} ${str(names.kind) ?? ''} is deprecated` };
      return { type };
    });
}

function versionType(spec: JsonMap, names: JsonMap, v: JsonMap, now: Now): ResourceType {
  const json = rec(rec(v.schema)?.openAPIV3Schema) ?? {};
  const sub = rec(v.subresources);
  const scale = rec(sub?.scale);
  const defaulted = hasDefaults(json);
  // Compiled once per CRD version; compile errors were refused with the CRD itself.
  const compiled = hasRules(json) ? compileRules(json, '', []) : undefined;
  const fill = (o: KObject) => applyDefaults(o, json);
  const type: ResourceType = {
    group: str(spec.group) ?? '',
    version: str(v.name) ?? '',
    resource: str(names.plural) ?? '',
    singular: str(names.singular) ?? '',
    kind: str(names.kind) ?? '',
    listKind: str(names.listKind) ?? '',
    namespaced: spec.scope !== 'Cluster',
    shortNames: arr(names.shortNames).filter((s): s is string => typeof s === 'string'),
    categories: arr(names.categories).filter((s): s is string => typeof s === 'string'),
    schema: customResourceSchema(json),
    openApi: json,
    hasStatus: isJsonObject(sub?.status),
    finalizerNames: 'qualified',
    customResource: true,
    // Objects read from storage are pruned to the current schema, as upstream's storage decoder does:
    // a CRD update that drops a field leaves objects readable and writable.
    pruneOnRead: true,
    tableColumns: columns(arr(v.additionalPrinterColumns), now),
    fieldSelectors: selectable(arr(v.selectableFields)),
    validate: (o: KObject, old?: KObject): Cause[] => {
      const causes = validateCustomObject(o, json);
      // CEL rules run on values of the right shape only, as upstream (after the schema's checks).
      return compiled && causes.length === 0 ? evaluateRules(compiled, o, old) : causes;
    },
  };
  // Upstream: without a status sub-resource, status is part of the spec for generation purposes.
  if (!type.hasStatus) type.bumpsGeneration = (o, old) => !isDeepStrictEqual(o.status, old.status);
  if (defaulted) {
    type.defaults = fill;
    type.readDefaults = fill;
  }
  if (scale) {
    type.scale = {
      specReplicasPath: str(scale.specReplicasPath) ?? '',
      statusReplicasPath: str(scale.statusReplicasPath) ?? '',
      ...(str(scale.labelSelectorPath) ? { labelSelectorPath: str(scale.labelSelectorPath) } : {}),
    };
  }
  return type;
}

/** additionalPrinterColumns as Table columns after Name; none declared: Age, as upstream's default for custom resources. */
function columns(cols: unknown[], now: Now): TableColumn[] {
  if (cols.length === 0) return [ageColumn(now)];
  return cols.map((c) => {
    const col = rec(c) ?? {};
    const type = (str(col.type) ?? 'string') as TableColumn['type'];
    const path = str(col.jsonPath) ?? '';
    return {
      name: str(col.name) ?? '',
      type,
      ...(str(col.format) ? { format: str(col.format) } : {}),
      description: str(col.description) ?? 'Custom resource definition column (in JSONPath format): ' + path,
      priority: typeof col.priority === 'number' ? col.priority : 0,
      cell: (o: KObject) => cell(evalJsonPath(o, path), type, now),
    };
  });
}

/** A cell as upstream's CRD table convertor prints it: dates as ages, scalars as they are, other values as JSON; absent: null (<none>). */
function cell(v: unknown, type: string, now: Now): unknown {
  if (v === undefined || v === null) return null;
  if (type === 'date') return translateTimestampSince(v, now);
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

/** selectableFields: `.spec.color` becomes the field selector `spec.color`, read as a string. */
function selectable(fields: unknown[]): Record<string, (o: KObject) => string | undefined> {
  const out: Record<string, (o: KObject) => string | undefined> = {};
  for (const f of fields) {
    const path = str(rec(f)?.jsonPath);
    if (!path) continue;
    out[path.slice(1)] = (o) => {
      const v = evalJsonPath(o, path);
      if (typeof v === 'string') return v;
      return v === undefined || v === null ? undefined : JSON.stringify(v);
    };
  }
  return out;
}
