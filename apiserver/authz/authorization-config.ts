import { isAbsolute } from 'node:path';
import YAML from 'yaml';
import { parseDuration } from '../api/duration';
import { compileCondition, MAX_MATCH_CONDITIONS, type CompiledCondition } from './cel-conditions';
import { AuthorizationConfigError } from './config-error';
import type { FailurePolicy } from './webhook';

export const AUTHZ_CONFIG_API_VERSION = 'apiserver.config.svc.io/v1';
export const AUTHORIZER_TYPES = ['Webhook', 'Node', 'RBAC', 'AlwaysAllow', 'AlwaysDeny'] as const;
export type AuthorizerType = (typeof AUTHORIZER_TYPES)[number];

export const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000;
export const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;

export interface WebhookEntry {
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorized: boolean;
  cacheUnauthorized: boolean;
  version: 'v1' | 'v1beta1';
  failurePolicy: FailurePolicy;
  kubeConfigFile: string;
  matchConditions: CompiledCondition[];
}

export interface AuthorizerEntry {
  type: AuthorizerType;
  name: string;
  webhook?: WebhookEntry;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Parses and validates an AuthorizationConfiguration (A.3) from YAML or JSON. Every problem is
 * collected and reported with its field path, as upstream's validation does; matchConditions are
 * compiled (and cost-checked) here, so a configuration is either fully usable or refused.
 */
export function parseAuthorizationConfig(text: string, file = 'authorization config'): AuthorizerEntry[] {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AuthorizationConfigError(`${file}: not valid YAML or JSON: ${(err as Error).message}`);
  }
  const errs: string[] = [];
  const out: AuthorizerEntry[] = [];
  if (!isRec(doc)) throw new AuthorizationConfigError(`${file}: must be an AuthorizationConfiguration object`);
  if (doc.apiVersion !== AUTHZ_CONFIG_API_VERSION) errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? '')}: supported values: "${AUTHZ_CONFIG_API_VERSION}"`);
  if (doc.kind !== 'AuthorizationConfiguration') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind ?? '')}: supported values: "AuthorizationConfiguration"`);
  const list = doc.authorizers;
  if (!Array.isArray(list) || list.length === 0) errs.push('authorizers: Required value: at least one authorization mode must be defined');
  const seenNames = new Set<string>();
  const seenTypes = new Set<string>();
  (Array.isArray(list) ? list : []).forEach((raw, i) => {
    const p = `authorizers[${i}]`;
    if (!isRec(raw)) {
      errs.push(`${p}: Invalid value: must be an object`);
      return;
    }
    const type = raw.type;
    const name = raw.name;
    if (typeof type !== 'string' || !type) errs.push(`${p}.type: Required value`);
    else if (!(AUTHORIZER_TYPES as readonly string[]).includes(type)) errs.push(`${p}.type: Unsupported value: ${JSON.stringify(type)}: supported values: ${AUTHORIZER_TYPES.map((t) => JSON.stringify(t)).join(', ')}`);
    else if (type !== 'Webhook') {
      if (seenTypes.has(type)) errs.push(`${p}.type: Duplicate value: ${JSON.stringify(type)}`);
      seenTypes.add(type);
    }
    if (typeof name !== 'string' || !name) errs.push(`${p}.name: Required value`);
    else {
      if (!LABEL.test(name) || name.length > 63) errs.push(`${p}.name: Invalid value: ${JSON.stringify(name)}: must be a lowercase DNS-1123 label`);
      if (seenNames.has(name)) errs.push(`${p}.name: Duplicate value: ${JSON.stringify(name)}`);
      seenNames.add(name);
    }
    if (type === 'Webhook') {
      if (!isRec(raw.webhook)) errs.push(`${p}.webhook: Required value: required when type=Webhook`);
      else {
        const w = parseWebhook(raw.webhook, `${p}.webhook`, errs);
        if (w && typeof name === 'string') out.push({ type: 'Webhook', name, webhook: w });
      }
    } else {
      if (raw.webhook !== undefined && raw.webhook !== null) errs.push(`${p}.webhook: Invalid value: non-null webhook config is only allowed for type Webhook`);
      if (typeof type === 'string' && (AUTHORIZER_TYPES as readonly string[]).includes(type) && typeof name === 'string') out.push({ type: type as AuthorizerType, name });
    }
  });
  if (errs.length) throw new AuthorizationConfigError(`${file}: invalid AuthorizationConfiguration: ${errs.join('; ')}`);
  return out;
}

function duration(w: Rec, key: string, p: string, errs: string[]): number | undefined {
  const v = w[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') {
    errs.push(`${p}.${key}: Invalid value: must be a duration string such as "30s"`);
    return undefined;
  }
  try {
    return parseDuration(v);
  } catch (err) {
    errs.push(`${p}.${key}: Invalid value: ${JSON.stringify(v)}: ${(err as Error).message}`);
    return undefined;
  }
}

function parseWebhook(w: Rec, p: string, errs: string[]): WebhookEntry | undefined {
  const before = errs.length;
  const timeout = duration(w, 'timeout', p, errs);
  if (w.timeout === undefined) errs.push(`${p}.timeout: Required value`);
  else if (timeout !== undefined && (timeout <= 0 || timeout > MAX_WEBHOOK_TIMEOUT_MS)) errs.push(`${p}.timeout: Invalid value: ${JSON.stringify(w.timeout)}: must be > 0s and <= 30s`);
  const authorizedTtl = duration(w, 'authorizedTTL', p, errs);
  const unauthorizedTtl = duration(w, 'unauthorizedTTL', p, errs);
  if (authorizedTtl !== undefined && authorizedTtl < 0) errs.push(`${p}.authorizedTTL: Invalid value: must be > 0s`);
  if (unauthorizedTtl !== undefined && unauthorizedTtl < 0) errs.push(`${p}.unauthorizedTTL: Invalid value: must be > 0s`);
  const bool = (key: string): boolean => {
    const v = w[key];
    if (v === undefined || v === null) return true;
    if (typeof v !== 'boolean') errs.push(`${p}.${key}: Invalid value: must be true or false`);
    return v === true;
  };
  const cacheAuthorized = bool('cacheAuthorizedRequests');
  const cacheUnauthorized = bool('cacheUnauthorizedRequests');
  const version = w.subjectAccessReviewVersion;
  if (version === undefined || version === '') errs.push(`${p}.subjectAccessReviewVersion: Required value`);
  else if (version !== 'v1' && version !== 'v1beta1') errs.push(`${p}.subjectAccessReviewVersion: Unsupported value: ${JSON.stringify(version)}: supported values: "v1", "v1beta1"`);
  const mcVersion = w.matchConditionSubjectAccessReviewVersion;
  const conditions = Array.isArray(w.matchConditions) ? w.matchConditions : [];
  if (w.matchConditions !== undefined && w.matchConditions !== null && !Array.isArray(w.matchConditions)) errs.push(`${p}.matchConditions: Invalid value: must be a list`);
  if ((mcVersion === undefined || mcVersion === '') && conditions.length > 0) errs.push(`${p}.matchConditionSubjectAccessReviewVersion: Required value`);
  else if (mcVersion !== undefined && mcVersion !== '' && mcVersion !== 'v1') errs.push(`${p}.matchConditionSubjectAccessReviewVersion: Unsupported value: ${JSON.stringify(mcVersion)}: supported values: "v1"`);
  const fp = w.failurePolicy;
  if (fp === undefined || fp === '') errs.push(`${p}.failurePolicy: Required value`);
  else if (fp !== 'NoOpinion' && fp !== 'Deny') errs.push(`${p}.failurePolicy: Unsupported value: ${JSON.stringify(fp)}: supported values: "Deny", "NoOpinion"`);
  const ci = w.connectionInfo;
  let kubeConfigFile = '';
  if (!isRec(ci)) errs.push(`${p}.connectionInfo: Required value`);
  else if (ci.type === 'KubeConfigFile') {
    if (typeof ci.kubeConfigFile !== 'string' || !ci.kubeConfigFile) errs.push(`${p}.connectionInfo.kubeConfigFile: Required value`);
    else if (!isAbsolute(ci.kubeConfigFile)) errs.push(`${p}.connectionInfo.kubeConfigFile: Invalid value: ${JSON.stringify(ci.kubeConfigFile)}: must be an absolute path`);
    else kubeConfigFile = ci.kubeConfigFile;
  } else if (ci.type === 'InClusterConfig') {
    errs.push(`${p}.connectionInfo.type: Unsupported value: "InClusterConfig": InClusterConfig is not permitted for the API server itself`);
  } else errs.push(`${p}.connectionInfo.type: Unsupported value: ${JSON.stringify(ci.type ?? '')}: supported values: "KubeConfigFile", "InClusterConfig"`);
  if (conditions.length > MAX_MATCH_CONDITIONS) errs.push(`${p}.matchConditions: Too many: ${conditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
  const compiled: CompiledCondition[] = [];
  const seen = new Set<string>();
  conditions.slice(0, MAX_MATCH_CONDITIONS).forEach((c, j) => {
    const cp = `${p}.matchConditions[${j}].expression`;
    const expr = isRec(c) ? c.expression : undefined;
    if (typeof expr !== 'string' || !expr.trim()) {
      errs.push(`${cp}: Required value`);
      return;
    }
    if (seen.has(expr)) errs.push(`${cp}: Duplicate value: ${JSON.stringify(expr)}`);
    seen.add(expr);
    try {
      compiled.push(compileCondition(expr));
    } catch (err) {
      errs.push(`${cp}: Invalid value: ${JSON.stringify(expr)}: ${(err as Error).message}`);
    }
  });
  if (errs.length > before) return undefined;
  return {
    timeoutMs: timeout!,
    authorizedTtlMs: authorizedTtl || DEFAULT_AUTHORIZED_TTL_MS,
    unauthorizedTtlMs: unauthorizedTtl || DEFAULT_UNAUTHORIZED_TTL_MS,
    cacheAuthorized,
    cacheUnauthorized,
    version: version as 'v1' | 'v1beta1',
    failurePolicy: fp as FailurePolicy,
    kubeConfigFile,
    matchConditions: compiled,
  };
}
