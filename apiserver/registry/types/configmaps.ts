import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { base64DecodedLength } from '../base64';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { forbidden, invalid, key, tooLong } from '../field-errors';
import { byteLen, configMapKeyErrors } from '../../api/name-validation';
import { rec } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { bool, bytes, map, ptr, strMap } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';

/** core/v1 ConfigMap. */

/** Upstream MaxSecretSize, also the ConfigMap limit: 1 MiB of data. */
export const MAX_DATA_SIZE = 1024 * 1024;

export const configMapSchema = withMeta('k8s.io.api.core.v1.ConfigMap', {
  immutable: [4, ptr(bool('If set to true, ensures that data stored in the ConfigMap cannot be updated.'))],
  data: [2, strMap('Data contains the configuration data.')],
  binaryData: [3, map(bytes(), 'BinaryData contains the binary data (base64 in JSON, bytes in protobuf).')],
});

/** Upstream ValidateConfigMap: config keys, no key in both maps, base64 binaryData, total ≤ 1 MiB. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const data = rec(o.data) ?? {};
  const binary = rec(o.binaryData) ?? {};
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    out.push(...messages(key('data', k), k, configMapKeyErrors(k)));
    if (k in binary) out.push(invalid(key('data', k), k, 'duplicate of key present in binaryData'));
    if (typeof v === 'string') total += byteLen(v);
  }
  for (const [k, v] of Object.entries(binary)) {
    out.push(...messages(key('binaryData', k), k, configMapKeyErrors(k)));
    if (typeof v !== 'string') continue;
    const n = base64DecodedLength(v);
    if (n < 0) out.push(invalid(key('binaryData', k), '<binary data>', 'illegal base64 data'));
    else total += n;
  }
  if (total > MAX_DATA_SIZE) out.push(tooLong('', MAX_DATA_SIZE));
  return out;
}

/** Upstream ValidateConfigMapUpdate: an immutable ConfigMap keeps its data and stays immutable. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  return immutableDataCauses(o, old, ['data', 'binaryData']);
}

/** Shared by ConfigMaps and Secrets. */
export function immutableDataCauses(o: KObject, old: KObject, fields: readonly string[]): Cause[] {
  if (old.immutable !== true) return [];
  const out: Cause[] = [];
  const msg = 'field is immutable when `immutable` is set';
  if (o.immutable !== true) out.push(forbidden('immutable', msg));
  for (const f of fields) if (!semanticEqual(o[f], old[f])) out.push(forbidden(f, msg));
  return out;
}

export function configMapColumns(now: Now): TableColumn[] {
  return [
    column('Data', 'integer', 'Data contains the configuration data.', (o) => Object.keys(rec(o.data) ?? {}).length + Object.keys(rec(o.binaryData) ?? {}).length),
    ageColumn(now),
  ];
}

export function makeConfigMapType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'configmaps',
    singular: 'configmap',
    kind: 'ConfigMap',
    listKind: 'ConfigMapList',
    namespaced: true,
    shortNames: ['cm'],
    schema: configMapSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: configMapColumns(now),
    validate,
    validateUpdate,
  };
}

export const configMapType: ResourceType = makeConfigMapType();
