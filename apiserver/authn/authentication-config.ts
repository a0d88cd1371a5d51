import { readFileSync } from 'node:fs';
import type { AnonymousPolicy } from './anonymous';
import { compileAuthenticationConfiguration } from './authentication-config-compile';
import { parseAuthenticationConfiguration } from './authentication-config-parse';
import {
  ALLOWED_SIGNING_ALGS,
  AuthenticationConfigError,
  type CompiledJwtAuthenticator,
  type JwtAuthenticatorConfig,
  type ValidateOptions,
} from './authentication-config-types';

/**
 * The structured authentication configuration of 5.3 (kind AuthenticationConfiguration,
 * apiserver.config.svc.io/v1): parsing (./authentication-config-parse), the validation rules
 * upstream's ValidateAuthenticationConfiguration applies (errors name the field) and compilation
 * of its CEL expressions (./authentication-config-compile, ./authentication-config-claims). The
 * --oidc-* flags of 5.2 are turned into the same structure, as upstream does.
 */

export {
  ALLOWED_SIGNING_ALGS,
  AUTHN_CONFIG_API_VERSIONS,
  AuthenticationConfigError,
  MAX_JWT_AUTHENTICATORS,
  type AuthenticationConfiguration,
  type ClaimOrExpression,
  type CompiledJwtAuthenticator,
  type JwtAuthenticatorConfig,
  type Mapping,
  type ValidateOptions,
} from './authentication-config-types';
export { parseAuthenticationConfiguration } from './authentication-config-parse';
export { compileAuthenticationConfiguration } from './authentication-config-compile';

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
