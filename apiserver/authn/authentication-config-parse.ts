/**
 * Reading an AuthenticationConfiguration document (YAML or JSON) into its typed structure: unknown
 * fields and wrong types are problems naming the field, as upstream's strict decoding reports them.
 * Every problem of the document is collected, in document order, before one error is thrown. The
 * rules on values and the CEL compilation follow in ./authentication-config-compile.
 */
import YAML from 'yaml';
import { isObject } from '../api/types';
import {
  AUTHN_CONFIG_API_VERSIONS,
  AuthenticationConfigError,
  type AuthenticationConfiguration,
  type ClaimOrExpression,
  type JwtAuthenticatorConfig,
  type Problems,
} from './authentication-config-types';

function checkKeys(o: Record<string, unknown>, path: string, allowed: readonly string[], out: Problems): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) out.push(`${path ? path + '.' : ''}${k}: unknown field`);
}

function optString(o: Record<string, unknown>, key: string, path: string, out: Problems): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    out.push(`${path}.${key}: Invalid value: must be a string`);
    return undefined;
  }
  return v;
}

function optObject(o: Record<string, unknown>, key: string, path: string, out: Problems): Record<string, unknown> | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    out.push(`${path}.${key}: Invalid value: must be an object`);
    return undefined;
  }
  return v;
}

function optList(o: Record<string, unknown>, key: string, path: string, out: Problems): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    out.push(`${path}.${key}: Invalid value: must be a list`);
    return [];
  }
  return v;
}

/** Parses the file's text (YAML or JSON) into the typed structure, reporting unknown fields and wrong types. */
export function parseAuthenticationConfiguration(text: string, source: string): AuthenticationConfiguration {
  const out: Problems = [];
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AuthenticationConfigError(source, [`invalid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (!isObject(doc)) throw new AuthenticationConfigError(source, ['not an AuthenticationConfiguration document']);
  checkKeys(doc, '', ['apiVersion', 'kind', 'jwt', 'anonymous'], out);
  if (doc.kind !== 'AuthenticationConfiguration') out.push(`kind: Invalid value: ${JSON.stringify(doc.kind)}: must be AuthenticationConfiguration`);
  if (!AUTHN_CONFIG_API_VERSIONS.includes(String(doc.apiVersion))) out.push(`apiVersion: Invalid value: ${JSON.stringify(doc.apiVersion)}: must be ${AUTHN_CONFIG_API_VERSIONS[0]}`);
  const jwt: JwtAuthenticatorConfig[] = [];
  optList(doc, 'jwt', '', out).forEach((raw, i) => {
    const cfg = parseJwt(raw, `jwt[${i}]`, out);
    if (cfg) jwt.push(cfg);
  });
  const result: AuthenticationConfiguration = { jwt };
  const anonymous = parseAnonymous(doc, out);
  if (anonymous) result.anonymous = anonymous;
  if (out.length > 0) throw new AuthenticationConfigError(source, out);
  return result;
}

/** One jwt[] entry; its fields' problems come in the order upstream's decoding meets them. */
function parseJwt(raw: unknown, p: string, out: Problems): JwtAuthenticatorConfig | undefined {
  if (!isObject(raw)) {
    out.push(`${p}: Invalid value: must be an object`);
    return undefined;
  }
  checkKeys(raw, p, ['issuer', 'claimValidationRules', 'claimMappings', 'userValidationRules'], out);
  const iss = optObject(raw, 'issuer', p, out) ?? {};
  checkKeys(iss, `${p}.issuer`, ['url', 'discoveryURL', 'certificateAuthority', 'audiences', 'audienceMatchPolicy', 'egressSelectorType'], out);
  const auds = optList(iss, 'audiences', `${p}.issuer`, out).map((a, j) => {
    if (typeof a !== 'string') out.push(`${p}.issuer.audiences[${j}]: Invalid value: must be a string`);
    return String(a);
  });
  const cm = optObject(raw, 'claimMappings', p, out) ?? {};
  checkKeys(cm, `${p}.claimMappings`, ['username', 'groups', 'uid', 'extra'], out);
  const mapping = (key: string, allowed: readonly string[]) => parseMapping(cm, key, allowed, p, out);
  const cfg: JwtAuthenticatorConfig = {
    issuer: { url: optString(iss, 'url', `${p}.issuer`, out) ?? '', audiences: auds },
    claimMappings: { username: mapping('username', ['claim', 'prefix', 'expression']) ?? {} },
  };
  for (const k of ['discoveryURL', 'certificateAuthority', 'audienceMatchPolicy', 'egressSelectorType'] as const) {
    const v = optString(iss, k, `${p}.issuer`, out);
    if (v !== undefined) cfg.issuer[k] = v;
  }
  const groups = mapping('groups', ['claim', 'prefix', 'expression']);
  if (groups) cfg.claimMappings.groups = groups;
  const uid = mapping('uid', ['claim', 'expression']);
  if (uid) cfg.claimMappings.uid = uid;
  const extra = parseExtra(cm, p, out);
  if (extra) cfg.claimMappings.extra = extra;
  const claimValidationRules = parseClaimValidationRules(raw, p, out);
  if (claimValidationRules) cfg.claimValidationRules = claimValidationRules;
  const userValidationRules = parseUserValidationRules(raw, p, out);
  if (userValidationRules) cfg.userValidationRules = userValidationRules;
  return cfg;
}

/** claimMappings.<key>: a claim (with a prefix where allowed) or an expression. */
function parseMapping(cm: Record<string, unknown>, key: string, allowed: readonly string[], p: string, out: Problems): ClaimOrExpression | undefined {
  const m = optObject(cm, key, `${p}.claimMappings`, out);
  if (!m) return undefined;
  const mp = `${p}.claimMappings.${key}`;
  checkKeys(m, mp, allowed, out);
  const r: ClaimOrExpression = {};
  const claim = optString(m, 'claim', mp, out);
  const prefix = optString(m, 'prefix', mp, out);
  const expression = optString(m, 'expression', mp, out);
  if (claim !== undefined) r.claim = claim;
  if (prefix !== undefined) r.prefix = prefix;
  if (expression !== undefined) r.expression = expression;
  return r;
}

function parseExtra(cm: Record<string, unknown>, p: string, out: Problems): JwtAuthenticatorConfig['claimMappings']['extra'] {
  const extra = optList(cm, 'extra', `${p}.claimMappings`, out);
  if (extra.length === 0) return undefined;
  return extra.map((e, j) => {
    const ep = `${p}.claimMappings.extra[${j}]`;
    if (!isObject(e)) {
      out.push(`${ep}: Invalid value: must be an object`);
      return { key: '', valueExpression: '' };
    }
    checkKeys(e, ep, ['key', 'valueExpression'], out);
    return { key: optString(e, 'key', ep, out) ?? '', valueExpression: optString(e, 'valueExpression', ep, out) ?? '' };
  });
}

function parseClaimValidationRules(raw: Record<string, unknown>, p: string, out: Problems): JwtAuthenticatorConfig['claimValidationRules'] {
  const cvr = optList(raw, 'claimValidationRules', p, out);
  if (cvr.length === 0) return undefined;
  return cvr.map((r, j) => {
    const rp = `${p}.claimValidationRules[${j}]`;
    if (!isObject(r)) {
      out.push(`${rp}: Invalid value: must be an object`);
      return {};
    }
    checkKeys(r, rp, ['claim', 'requiredValue', 'expression', 'message'], out);
    const rule: { claim?: string; requiredValue?: string; expression?: string; message?: string } = {};
    for (const k of ['claim', 'requiredValue', 'expression', 'message'] as const) {
      const v = optString(r, k, rp, out);
      if (v !== undefined) rule[k] = v;
    }
    return rule;
  });
}

function parseUserValidationRules(raw: Record<string, unknown>, p: string, out: Problems): JwtAuthenticatorConfig['userValidationRules'] {
  const uvr = optList(raw, 'userValidationRules', p, out);
  if (uvr.length === 0) return undefined;
  return uvr.map((r, j) => {
    const rp = `${p}.userValidationRules[${j}]`;
    if (!isObject(r)) {
      out.push(`${rp}: Invalid value: must be an object`);
      return { expression: '' };
    }
    checkKeys(r, rp, ['expression', 'message'], out);
    const message = optString(r, 'message', rp, out);
    return { expression: optString(r, 'expression', rp, out) ?? '', ...(message !== undefined ? { message } : {}) };
  });
}

function parseAnonymous(doc: Record<string, unknown>, out: Problems): AuthenticationConfiguration['anonymous'] {
  const anon = optObject(doc, 'anonymous', '', out);
  if (!anon) return undefined;
  checkKeys(anon, 'anonymous', ['enabled', 'conditions'], out);
  if (typeof anon.enabled !== 'boolean') out.push('anonymous.enabled: Required value: must be true or false');
  const conditions = optList(anon, 'conditions', 'anonymous', out).map((c, j) => {
    const cp = `anonymous.conditions[${j}]`;
    if (!isObject(c)) {
      out.push(`${cp}: Invalid value: must be an object`);
      return { path: '' };
    }
    checkKeys(c, cp, ['path'], out);
    return { path: optString(c, 'path', cp, out) ?? '' };
  });
  return { enabled: anon.enabled === true, ...(conditions.length > 0 ? { conditions } : {}) };
}
