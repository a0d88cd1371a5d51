import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { isObject } from '../api/types';
import { CelCompileError, CelEnvironment, type CelProgram } from '../cel/program';
import type { AnonymousPolicy } from './anonymous';
import { CertPool } from './cert-chain';

/**
 * The structured authentication configuration of 5.3 (kind AuthenticationConfiguration,
 * apiserver.config.svc.io/v1): parsing, the validation rules upstream's
 * ValidateAuthenticationConfiguration applies (errors name the field), and compilation of its
 * CEL expressions. The --oidc-* flags of 5.2 are turned into the same structure, as upstream does.
 */

export const MAX_JWT_AUTHENTICATORS = 64;
export const AUTHN_CONFIG_API_VERSIONS = ['apiserver.config.svc.io/v1', 'apiserver.config.svc.io/v1beta1', 'apiserver.config.svc.io/v1alpha1'];
/** 5.2: the signing algorithms OIDC tokens may use. */
export const ALLOWED_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

export interface ClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: string;
}

export interface JwtAuthenticatorConfig {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: string;
    egressSelectorType?: string;
  };
  claimValidationRules?: Array<{ claim?: string; requiredValue?: string; expression?: string; message?: string }>;
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: { claim?: string; expression?: string };
    extra?: Array<{ key: string; valueExpression: string }>;
  };
  userValidationRules?: Array<{ expression: string; message?: string }>;
}

export interface AuthenticationConfiguration {
  jwt: JwtAuthenticatorConfig[];
  anonymous?: AnonymousPolicy;
}

export type Mapping = { kind: 'claim'; claim: string; prefix: string } | { kind: 'expression'; program: CelProgram };

/** One JWT authenticator ready to run: its configuration with every expression compiled. */
export interface CompiledJwtAuthenticator {
  config: JwtAuthenticatorConfig;
  signingAlgorithms: readonly string[];
  claimValidation: Array<{ kind: 'claim'; claim: string; requiredValue: string } | { kind: 'expression'; program: CelProgram; message: string }>;
  username: Mapping;
  groups?: Mapping;
  uid?: Mapping;
  extra: Array<{ key: string; program: CelProgram }>;
  userValidation: Array<{ program: CelProgram; message: string }>;
}

export class AuthenticationConfigError extends Error {
  override readonly name = 'AuthenticationConfigError';
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}: ${problems.join('; ')}`);
  }
}

const claimsEnv = new CelEnvironment({ variables: ['claims'] });
const userEnv = new CelEnvironment({ variables: ['user'] });

type Problems = string[];

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
    const p = `jwt[${i}]`;
    if (!isObject(raw)) {
      out.push(`${p}: Invalid value: must be an object`);
      return;
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
    const mapping = (key: string, allowed: readonly string[]): ClaimOrExpression | undefined => {
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
    };
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
    const extra = optList(cm, 'extra', `${p}.claimMappings`, out);
    if (extra.length > 0) {
      cfg.claimMappings.extra = extra.map((e, j) => {
        const ep = `${p}.claimMappings.extra[${j}]`;
        if (!isObject(e)) {
          out.push(`${ep}: Invalid value: must be an object`);
          return { key: '', valueExpression: '' };
        }
        checkKeys(e, ep, ['key', 'valueExpression'], out);
        return { key: optString(e, 'key', ep, out) ?? '', valueExpression: optString(e, 'valueExpression', ep, out) ?? '' };
      });
    }
    const cvr = optList(raw, 'claimValidationRules', p, out);
    if (cvr.length > 0) {
      cfg.claimValidationRules = cvr.map((r, j) => {
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
    const uvr = optList(raw, 'userValidationRules', p, out);
    if (uvr.length > 0) {
      cfg.userValidationRules = uvr.map((r, j) => {
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
    jwt.push(cfg);
  });
  const result: AuthenticationConfiguration = { jwt };
  const anon = optObject(doc, 'anonymous', '', out);
  if (anon) {
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
    result.anonymous = { enabled: anon.enabled === true, ...(conditions.length > 0 ? { conditions } : {}) };
  }
  if (out.length > 0) throw new AuthenticationConfigError(source, out);
  return result;
}

function httpsUrlProblems(value: string, field: string): string[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [`${field}: Invalid value: ${JSON.stringify(value)}: must be a valid URL`];
  }
  const out: string[] = [];
  if (u.protocol !== 'https:') out.push(`${field}: Invalid value: ${JSON.stringify(value)}: URL scheme must be https`);
  if (u.username || u.password) out.push(`${field}: Invalid value: ${JSON.stringify(value)}: URL must not contain a username or password`);
  if (u.search || value.includes('?')) out.push(`${field}: Invalid value: ${JSON.stringify(value)}: URL must not contain a query`);
  if (u.hash || value.includes('#')) out.push(`${field}: Invalid value: ${JSON.stringify(value)}: URL must not contain a fragment`);
  return out;
}

const EXTRA_KEY = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[^\s]+$/;

/** True when the expression reads claims.email (not claims.email_verified). */
function readsEmail(expr: string): boolean {
  return /\bclaims\s*\.\s*email\b(?!_)/.test(expr) || /\bclaims\s*\[\s*['"]email['"]\s*\]/.test(expr);
}
function readsEmailVerified(expr: string | undefined): boolean {
  return expr !== undefined && (/\bclaims\s*\.\s*email_verified\b/.test(expr) || /\bclaims\s*\[\s*['"]email_verified['"]\s*\]/.test(expr));
}

export interface ValidateOptions {
  /** --service-account-issuer values: no JWT authenticator may claim them. */
  serviceAccountIssuers?: readonly string[];
  /** Signing algorithms per authenticator (the flags' --oidc-signing-algs); default all of 5.2's list. */
  signingAlgorithms?: readonly string[];
}

/** Validates and compiles every authenticator; throws AuthenticationConfigError listing every problem with its field. */
export function compileAuthenticationConfiguration(cfg: AuthenticationConfiguration, source: string, o: ValidateOptions = {}): { jwt: CompiledJwtAuthenticator[]; anonymous?: AnonymousPolicy } {
  const out: Problems = [];
  if (cfg.jwt.length > MAX_JWT_AUTHENTICATORS) out.push(`jwt: Too many: ${cfg.jwt.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
  const urls = new Set<string>();
  const discovery = new Set<string>();
  const compiled: CompiledJwtAuthenticator[] = [];
  cfg.jwt.forEach((a, i) => {
    const c = compileJwt(a, `jwt[${i}]`, out, urls, discovery, o);
    if (c) compiled.push(c);
  });
  if (cfg.anonymous && !cfg.anonymous.enabled && cfg.anonymous.conditions?.length) {
    out.push('anonymous.conditions: Invalid value: enabled should be set to true when conditions are defined');
  }
  cfg.anonymous?.conditions?.forEach((c, j) => {
    if (!c.path) out.push(`anonymous.conditions[${j}].path: Required value`);
  });
  const paths = new Set<string>();
  cfg.anonymous?.conditions?.forEach((c, j) => {
    if (paths.has(c.path)) out.push(`anonymous.conditions[${j}].path: Duplicate value: ${JSON.stringify(c.path)}`);
    paths.add(c.path);
  });
  if (out.length > 0) throw new AuthenticationConfigError(source, out);
  return { jwt: compiled, ...(cfg.anonymous ? { anonymous: cfg.anonymous } : {}) };
}

function compileJwt(a: JwtAuthenticatorConfig, p: string, out: Problems, urls: Set<string>, discovery: Set<string>, o: ValidateOptions): CompiledJwtAuthenticator | undefined {
  const before = out.length;
  const compile = (env: CelEnvironment, expr: string, field: string): CelProgram | undefined => {
    try {
      return env.compile(expr);
    } catch (err) {
      if (err instanceof CelCompileError) out.push(`${field}: Invalid value: ${JSON.stringify(expr)}: ${err.message}`);
      else throw err;
      return undefined;
    }
  };
  const iss = a.issuer;
  if (!iss.url) out.push(`${p}.issuer.url: Required value`);
  else {
    out.push(...httpsUrlProblems(iss.url, `${p}.issuer.url`));
    if (urls.has(iss.url)) out.push(`${p}.issuer.url: Duplicate value: ${JSON.stringify(iss.url)}`);
    urls.add(iss.url);
    if (o.serviceAccountIssuers?.includes(iss.url)) out.push(`${p}.issuer.url: Invalid value: ${JSON.stringify(iss.url)}: URL must not overlap with disallowed issuers: ${JSON.stringify(o.serviceAccountIssuers)}`);
  }
  if (iss.discoveryURL !== undefined && iss.discoveryURL !== '') {
    out.push(...httpsUrlProblems(iss.discoveryURL, `${p}.issuer.discoveryURL`));
    if (iss.discoveryURL.replace(/\/+$/, '') === iss.url.replace(/\/+$/, '')) out.push(`${p}.issuer.discoveryURL: Invalid value: ${JSON.stringify(iss.discoveryURL)}: discoveryURL must be different from URL`);
    if (discovery.has(iss.discoveryURL)) out.push(`${p}.issuer.discoveryURL: Duplicate value: ${JSON.stringify(iss.discoveryURL)}`);
    discovery.add(iss.discoveryURL);
  }
  if (iss.audiences.length === 0) out.push(`${p}.issuer.audiences: Required value: at least one issuer.audiences is required`);
  const seenAud = new Set<string>();
  iss.audiences.forEach((aud, j) => {
    if (aud === '') out.push(`${p}.issuer.audiences[${j}]: Required value`);
    if (seenAud.has(aud)) out.push(`${p}.issuer.audiences[${j}]: Duplicate value: ${JSON.stringify(aud)}`);
    seenAud.add(aud);
  });
  const policy = iss.audienceMatchPolicy ?? '';
  if (iss.audiences.length > 1 && policy !== 'MatchAny') out.push(`${p}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(policy)}: audienceMatchPolicy must be MatchAny for multiple audiences`);
  if (iss.audiences.length <= 1 && policy !== '' && policy !== 'MatchAny') out.push(`${p}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(policy)}: audienceMatchPolicy must be empty or MatchAny for single audience`);
  if (iss.egressSelectorType !== undefined && !['controlplane', 'cluster'].includes(iss.egressSelectorType)) {
    out.push(`${p}.issuer.egressSelectorType: Unsupported value: ${JSON.stringify(iss.egressSelectorType)}: supported values: "cluster", "controlplane"`);
  }
  if (iss.certificateAuthority) {
    try {
      new CertPool(iss.certificateAuthority);
    } catch (err) {
      out.push(`${p}.issuer.certificateAuthority: Invalid value: <omitted>: ${(err as Error).message}`);
    }
  }

  const claimValidation: CompiledJwtAuthenticator['claimValidation'] = [];
  const seenClaims = new Set<string>();
  (a.claimValidationRules ?? []).forEach((r, j) => {
    const rp = `${p}.claimValidationRules[${j}]`;
    if (r.claim !== undefined && r.expression !== undefined) out.push(`${rp}: Invalid value: claim and expression can't both be set`);
    else if (r.claim === undefined && r.expression === undefined) out.push(`${rp}: Required value: claim or expression is required`);
    else if (r.claim !== undefined) {
      if (r.message !== undefined) out.push(`${rp}.message: Invalid value: message can't be set when claim is set`);
      if (r.claim === '') out.push(`${rp}.claim: Required value`);
      if (seenClaims.has(r.claim)) out.push(`${rp}.claim: Duplicate value: ${JSON.stringify(r.claim)}`);
      seenClaims.add(r.claim);
      claimValidation.push({ kind: 'claim', claim: r.claim, requiredValue: r.requiredValue ?? '' });
    } else {
      if (r.requiredValue !== undefined) out.push(`${rp}.requiredValue: Invalid value: requiredValue can't be set when expression is set`);
      const prog = compile(claimsEnv, r.expression!, `${rp}.expression`);
      if (prog) claimValidation.push({ kind: 'expression', program: prog, message: r.message ?? '' });
    }
  });

  const mapping = (m: ClaimOrExpression | undefined, field: string, prefixAllowed: boolean, required: boolean): Mapping | undefined => {
    const f = `${p}.claimMappings.${field}`;
    if (!m || (m.claim === undefined && m.expression === undefined)) {
      if (required) out.push(`${f}: Required value: claim or expression is required`);
      if (m?.prefix !== undefined) out.push(`${f}.prefix: Invalid value: prefix can't be set when claim is not set`);
      return undefined;
    }
    if (m.claim !== undefined && m.expression !== undefined) {
      out.push(`${f}: Invalid value: claim and expression can't both be set`);
      return undefined;
    }
    if (m.claim !== undefined) {
      if (m.claim === '') out.push(`${f}.claim: Required value`);
      if (prefixAllowed && m.prefix === undefined) out.push(`${f}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
      return { kind: 'claim', claim: m.claim, prefix: m.prefix ?? '' };
    }
    if (m.prefix !== undefined) out.push(`${f}.prefix: Invalid value: prefix can't be set when expression is set`);
    const prog = compile(claimsEnv, m.expression!, `${f}.expression`);
    return prog ? { kind: 'expression', program: prog } : undefined;
  };
  const cm = a.claimMappings;
  const username = mapping(cm.username, 'username', true, true);
  const groups = mapping(cm.groups, 'groups', true, false);
  const uid = mapping(cm.uid, 'uid', false, false);

  const extra: CompiledJwtAuthenticator['extra'] = [];
  const seenKeys = new Set<string>();
  (cm.extra ?? []).forEach((e, j) => {
    const ep = `${p}.claimMappings.extra[${j}]`;
    if (!e.key) out.push(`${ep}.key: Required value`);
    else {
      if (!EXTRA_KEY.test(e.key)) out.push(`${ep}.key: Invalid value: ${JSON.stringify(e.key)}: must be a domain-prefixed path (such as "acme.io/foo")`);
      if (e.key !== e.key.toLowerCase()) out.push(`${ep}.key: Invalid value: ${JSON.stringify(e.key)}: key must be lowercase`);
      const domain = e.key.split('/')[0];
      if (domain === 'svc.io' || domain.endsWith('.svc.io')) out.push(`${ep}.key: Invalid value: ${JSON.stringify(e.key)}: svc.io domain is reserved`);
      if (seenKeys.has(e.key)) out.push(`${ep}.key: Duplicate value: ${JSON.stringify(e.key)}`);
      seenKeys.add(e.key);
    }
    if (!e.valueExpression) out.push(`${ep}.valueExpression: Required value: valueExpression is required`);
    else {
      const prog = compile(claimsEnv, e.valueExpression, `${ep}.valueExpression`);
      if (prog) extra.push({ key: e.key, program: prog });
    }
  });

  // 5.3: an expression that maps claims.email to the username must check email_verified somewhere.
  const ue = cm.username.expression;
  if (ue !== undefined && readsEmail(ue)) {
    const checked = readsEmailVerified(ue) || (cm.extra ?? []).some((e) => readsEmailVerified(e.valueExpression)) || (a.claimValidationRules ?? []).some((r) => readsEmailVerified(r.expression));
    if (!checked) {
      out.push(
        `${p}.claimMappings.username.expression: Invalid value: ${JSON.stringify(ue)}: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression`,
      );
    }
  }

  const userValidation: CompiledJwtAuthenticator['userValidation'] = [];
  const seenRules = new Set<string>();
  (a.userValidationRules ?? []).forEach((r, j) => {
    const rp = `${p}.userValidationRules[${j}]`;
    if (!r.expression) {
      out.push(`${rp}.expression: Required value: expression is required`);
      return;
    }
    if (seenRules.has(r.expression)) out.push(`${rp}.expression: Duplicate value: ${JSON.stringify(r.expression)}`);
    seenRules.add(r.expression);
    const prog = compile(userEnv, r.expression, `${rp}.expression`);
    if (prog) userValidation.push({ program: prog, message: r.message ?? '' });
  });

  const algs = o.signingAlgorithms ?? ALLOWED_SIGNING_ALGS;
  if (out.length > before || !username) return undefined;
  return { config: a, signingAlgorithms: algs, claimValidation, username, ...(groups ? { groups } : {}), ...(uid ? { uid } : {}), extra, userValidation };
}

/** Reads, parses, validates and compiles a configuration file (--authentication-config). */
export function loadAuthenticationConfiguration(path: string, o: ValidateOptions = {}): { jwt: CompiledJwtAuthenticator[]; anonymous?: AnonymousPolicy; text: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AuthenticationConfigError(path, [`cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
  return { ...compileAuthenticationConfiguration(parseAuthenticationConfiguration(text, path), path, o), text };
}

/** The --oidc-* flags of 5.2. */
export interface OidcFlags {
  issuerUrl: string;
  clientId: string;
  usernameClaim?: string;
  /** Unset: "<issuer>#" unless the claim is email; "-" disables prefixing. */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  /** --oidc-required-claim key=value, repeatable. */
  requiredClaims?: Readonly<Record<string, string>>;
  /** Contents of --oidc-ca-file. */
  caPem?: string;
  /** --oidc-signing-algs; default RS256. */
  signingAlgs?: readonly string[];
}

/** Turns the flags into one compiled JWT authenticator, as upstream converts them to the structured form. Throws naming the flag. */
export function compileOidcFlags(f: OidcFlags, o: Pick<ValidateOptions, 'serviceAccountIssuers'> = {}): CompiledJwtAuthenticator {
  const problems: string[] = [];
  if (!f.issuerUrl) problems.push('--oidc-issuer-url: Required value');
  if (!f.clientId) problems.push('--oidc-client-id: Required value: --oidc-issuer-url and --oidc-client-id must be specified together');
  const algs = f.signingAlgs && f.signingAlgs.length > 0 ? f.signingAlgs : ['RS256'];
  for (const a of algs) if (!(ALLOWED_SIGNING_ALGS as readonly string[]).includes(a)) problems.push(`--oidc-signing-algs: Unsupported value: ${JSON.stringify(a)}: supported values: ${ALLOWED_SIGNING_ALGS.join(', ')}`);
  if (problems.length > 0) throw new AuthenticationConfigError('flags', problems);
  const claim = f.usernameClaim || 'sub';
  let prefix: string;
  if (f.usernamePrefix === '-') prefix = '';
  else if (f.usernamePrefix !== undefined && f.usernamePrefix !== '') prefix = f.usernamePrefix;
  else prefix = claim === 'email' ? '' : `${f.issuerUrl}#`;
  const cfg: JwtAuthenticatorConfig = {
    issuer: { url: f.issuerUrl, audiences: [f.clientId], ...(f.caPem ? { certificateAuthority: f.caPem } : {}) },
    claimMappings: { username: { claim, prefix } },
  };
  if (f.groupsClaim) cfg.claimMappings.groups = { claim: f.groupsClaim, prefix: f.groupsPrefix ?? '' };
  const required = Object.entries(f.requiredClaims ?? {});
  if (required.length > 0) cfg.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  try {
    const c = compileAuthenticationConfiguration({ jwt: [cfg] }, 'flags', { ...o, signingAlgorithms: algs });
    return c.jwt[0];
  } catch (err) {
    if (err instanceof AuthenticationConfigError) throw new AuthenticationConfigError('--oidc-* flags', err.problems.map((p) => p.replace(/^jwt\[0\]\.issuer\.url/, '--oidc-issuer-url').replace(/^jwt\[0\]\./, '')));
    throw err;
  }
}

/** Parses repeatable --oidc-required-claim values "key=value". */
export function parseRequiredClaims(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new AuthenticationConfigError('--oidc-required-claim', [`Invalid value: ${JSON.stringify(v)}: must be key=value`]);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}
