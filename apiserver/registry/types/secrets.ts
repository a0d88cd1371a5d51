import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { base64DecodedLength, decodeBase64 } from '../base64';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { immutable, invalid, key, required, tooLong } from '../field-errors';
import { configMapKeyErrors } from '../../api/name-validation';
import { rec, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { bool, bytes, map, ptr, str as s, strMap } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';
import { immutableDataCauses, MAX_DATA_SIZE } from './configmaps';

/** core/v1 Secret. Type names use svc.io where upstream uses kubernetes.io. */

export const SECRET_TYPES = {
  opaque: 'Opaque',
  serviceAccountToken: 'svc.io/service-account-token',
  dockercfg: 'svc.io/dockercfg',
  dockerConfigJson: 'svc.io/dockerconfigjson',
  basicAuth: 'svc.io/basic-auth',
  sshAuth: 'svc.io/ssh-auth',
  tls: 'svc.io/tls',
  bootstrapToken: 'bootstrap.svc.io/token',
} as const;

/** Annotation naming the ServiceAccount a token secret belongs to (upstream kubernetes.io/service-account.name). */
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'svc.io/service-account.name';

export const secretSchema = withMeta('k8s.io.api.core.v1.Secret', {
  immutable: [5, ptr(bool('If set to true, ensures that data stored in the Secret cannot be updated.'))],
  data: [2, map(bytes(), 'Data contains the secret data (base64 in JSON, bytes in protobuf).')],
  stringData: [4, strMap('Write-only convenience: merged into data on write, never stored or returned.')],
  type: [3, s('Used to facilitate programmatic handling of secret data.')],
});

/**
 * Upstream SetDefaults_Secret (type Opaque) and the v1 conversion that merges the write-only
 * stringData into data (stringData wins on conflicts).
 */
function defaults(o: KObject): void {
  if (!o.type) o.type = SECRET_TYPES.opaque;
  const sd = rec(o.stringData);
  if (sd) {
    // A value that is not a string (YAML reads an unquoted 123456 as a number) stays in
    // stringData for the schema check to refuse, naming the key: dropping it silently stored a
    // Secret without that key (a bootstrap token without its token-id, refused with 401 later).
    // Upstream refuses such a body when decoding it (stringData is map[string]string).
    if (Object.values(sd).some((v) => typeof v !== 'string')) return;
    const data: Record<string, unknown> = { ...(rec(o.data) ?? {}) };
    for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(v as string, 'utf8').toString('base64');
    o.data = data;
  }
  delete o.stringData;
}

function has(data: Record<string, unknown>, k: string): boolean {
  return data[k] !== undefined && data[k] !== null;
}

function validJson(data: Record<string, unknown>, k: string): Cause[] {
  const raw = str(data[k]);
  const bytes = raw === undefined ? undefined : decodeBase64(raw);
  if (!bytes) return [];
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return [];
    return [invalid(key('data', k), '<secret contents redacted>', 'json: cannot unmarshal into map[string]interface {}')];
  } catch (err) {
    return [invalid(key('data', k), '<secret contents redacted>', (err as Error).message)];
  }
}

/** Upstream ValidateSecret: config keys, base64 values, size, and the per-type required keys. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const data = rec(o.data) ?? {};
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    out.push(...messages(key('data', k), k, configMapKeyErrors(k)));
    if (typeof v !== 'string') continue;
    const n = base64DecodedLength(v);
    if (n < 0) out.push(invalid(key('data', k), '<secret contents redacted>', 'illegal base64 data'));
    else total += n;
  }
  if (total > MAX_DATA_SIZE) out.push(tooLong('data', MAX_DATA_SIZE));
  switch (o.type) {
    case SECRET_TYPES.serviceAccountToken:
      if (!o.metadata?.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION]) {
        out.push(required(key('metadata.annotations', SERVICE_ACCOUNT_NAME_ANNOTATION)));
      }
      break;
    case SECRET_TYPES.dockercfg:
      if (!has(data, '.dockercfg')) out.push(required(key('data', '.dockercfg')));
      else out.push(...validJson(data, '.dockercfg'));
      break;
    case SECRET_TYPES.dockerConfigJson:
      if (!has(data, '.dockerconfigjson')) out.push(required(key('data', '.dockerconfigjson')));
      else out.push(...validJson(data, '.dockerconfigjson'));
      break;
    case SECRET_TYPES.basicAuth:
      if (!has(data, 'username') && !has(data, 'password')) {
        out.push(required(key('data', 'username')), required(key('data', 'password')));
      }
      break;
    case SECRET_TYPES.sshAuth:
      if (!str(data['ssh-privatekey'])) out.push(required(key('data', 'ssh-privatekey')));
      break;
    case SECRET_TYPES.tls:
      if (!has(data, 'tls.crt')) out.push(required(key('data', 'tls.crt')));
      if (!has(data, 'tls.key')) out.push(required(key('data', 'tls.key')));
      break;
  }
  return out;
}

/** Upstream ValidateSecretUpdate: type is immutable; an immutable secret keeps its data. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  if ((o.type ?? '') !== (old.type ?? '')) out.push(immutable('type', o.type ?? ''));
  out.push(...immutableDataCauses(o, old, ['data']));
  return out;
}

export function secretColumns(now: Now): TableColumn[] {
  return [
    column('Type', 'string', 'Used to facilitate programmatic handling of secret data.', (o) => str(o.type) ?? ''),
    column('Data', 'integer', 'Contains the secret data.', (o) => Object.keys(rec(o.data) ?? {}).length),
    ageColumn(now),
  ];
}

export function makeSecretType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'secrets',
    singular: 'secret',
    kind: 'Secret',
    listKind: 'SecretList',
    namespaced: true,
    schema: secretSchema,
    hasStatus: false,
    specFields: [],
    fieldSelectors: { type: (o) => str(o.type) ?? '' },
    tableColumns: secretColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const secretType: ResourceType = makeSecretType();
