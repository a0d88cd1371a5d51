/**
 * The shapes of the structured authentication configuration (kind AuthenticationConfiguration,
 * apiserver.config.svc.io/v1) as parsed (./authentication-config-parse) and as compiled
 * (./authentication-config-compile), with the error both report: every problem naming its field.
 */
import type { CelProgram } from '../cel/program';
import type { AnonymousPolicy } from './anonymous';

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

/** Problems found so far, each naming its field in upstream's field.ErrorList wording. */
export type Problems = string[];

export interface ValidateOptions {
  /** --service-account-issuer values: no JWT authenticator may claim them. */
  serviceAccountIssuers?: readonly string[];
  /** Signing algorithms per authenticator (the flags' --oidc-signing-algs); default all of 5.2's list. */
  signingAlgorithms?: readonly string[];
}
