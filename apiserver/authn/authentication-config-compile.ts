/**
 * Validating and compiling a parsed AuthenticationConfiguration: the rules upstream's
 * ValidateAuthenticationConfiguration applies to the issuer (https URLs, distinct issuers and
 * discovery URLs, audiences and their match policy, the CA bundle) and to anonymous, with the
 * claim rules and mappings compiled in ./authentication-config-claims. Every problem names its
 * field; all of them are collected before one error is thrown.
 */
import { CertPool } from './cert-chain';
import { checkEmailVerified, compileClaimValidation, compileExtra, compileMappings, compileUserValidation } from './authentication-config-claims';
import {
  ALLOWED_SIGNING_ALGS,
  AuthenticationConfigError,
  MAX_JWT_AUTHENTICATORS,
  type AuthenticationConfiguration,
  type CompiledJwtAuthenticator,
  type JwtAuthenticatorConfig,
  type Problems,
  type ValidateOptions,
} from './authentication-config-types';
import type { AnonymousPolicy } from './anonymous';

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
  validateIssuer(a.issuer, p, out, urls, discovery, o);
  const claimValidation = compileClaimValidation(a, p, out);
  const cm = a.claimMappings;
  const { username, groups, uid } = compileMappings(cm, p, out);
  const extra = compileExtra(cm, p, out);
  checkEmailVerified(a, p, out);
  const userValidation = compileUserValidation(a, p, out);

  const algs = o.signingAlgorithms ?? ALLOWED_SIGNING_ALGS;
  if (out.length > before || !username) return undefined;
  return { config: a, signingAlgorithms: algs, claimValidation, username, ...(groups ? { groups } : {}), ...(uid ? { uid } : {}), extra, userValidation };
}

/** The issuer: https URLs distinct across authenticators and from the service account issuers, audiences, CA bundle. */
function validateIssuer(iss: JwtAuthenticatorConfig['issuer'], p: string, out: Problems, urls: Set<string>, discovery: Set<string>, o: ValidateOptions): void {
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
}
