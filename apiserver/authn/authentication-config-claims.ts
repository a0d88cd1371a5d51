/**
 * The claim side of one JWT authenticator, compiled: claim validation rules, claim mappings
 * (username, groups, uid, extra), the email_verified rule of 5.3 and user validation rules. Each
 * expression is compiled with CEL (claims or user as its variable); a problem names its field as
 * upstream's ValidateAuthenticationConfiguration does, and the callers collect them all.
 */
import { CelCompileError, CelEnvironment, type CelProgram } from '../cel/program';
import type { ClaimOrExpression, CompiledJwtAuthenticator, JwtAuthenticatorConfig, Mapping, Problems } from './authentication-config-types';

const claimsEnv = new CelEnvironment({ variables: ['claims'] });
const userEnv = new CelEnvironment({ variables: ['user'] });

const EXTRA_KEY = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[^\s]+$/;

/** True when the expression reads claims.email (not claims.email_verified). */
function readsEmail(expr: string): boolean {
  return /\bclaims\s*\.\s*email\b(?!_)/.test(expr) || /\bclaims\s*\[\s*['"]email['"]\s*\]/.test(expr);
}
function readsEmailVerified(expr: string | undefined): boolean {
  return expr !== undefined && (/\bclaims\s*\.\s*email_verified\b/.test(expr) || /\bclaims\s*\[\s*['"]email_verified['"]\s*\]/.test(expr));
}

/** A CEL compile that reports a compile error into `out` under the field and gives undefined. */
function celCompiler(out: Problems) {
  return (env: CelEnvironment, expr: string, field: string): CelProgram | undefined => {
    try {
      return env.compile(expr);
    } catch (err) {
      if (err instanceof CelCompileError) out.push(`${field}: Invalid value: ${JSON.stringify(expr)}: ${err.message}`);
      else throw err;
      return undefined;
    }
  };
}

/** claimValidationRules: a claim with its required value, or an expression with its message. */
export function compileClaimValidation(a: JwtAuthenticatorConfig, p: string, out: Problems): CompiledJwtAuthenticator['claimValidation'] {
  const compile = celCompiler(out);
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
  return claimValidation;
}

/** claimMappings username (required), groups and uid: each a claim (with a prefix where allowed) or an expression. */
export function compileMappings(cm: JwtAuthenticatorConfig['claimMappings'], p: string, out: Problems): { username?: Mapping; groups?: Mapping; uid?: Mapping } {
  const compile = celCompiler(out);
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
  const username = mapping(cm.username, 'username', true, true);
  const groups = mapping(cm.groups, 'groups', true, false);
  const uid = mapping(cm.uid, 'uid', false, false);
  return { ...(username ? { username } : {}), ...(groups ? { groups } : {}), ...(uid ? { uid } : {}) };
}

/** claimMappings.extra: domain-prefixed lowercase keys (svc.io reserved), each with a value expression. */
export function compileExtra(cm: JwtAuthenticatorConfig['claimMappings'], p: string, out: Problems): CompiledJwtAuthenticator['extra'] {
  const compile = celCompiler(out);
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
  return extra;
}

/** 5.3: an expression that maps claims.email to the username must check email_verified somewhere. */
export function checkEmailVerified(a: JwtAuthenticatorConfig, p: string, out: Problems): void {
  const cm = a.claimMappings;
  const ue = cm.username.expression;
  if (ue !== undefined && readsEmail(ue)) {
    const checked = readsEmailVerified(ue) || (cm.extra ?? []).some((e) => readsEmailVerified(e.valueExpression)) || (a.claimValidationRules ?? []).some((r) => readsEmailVerified(r.expression));
    if (!checked) {
      out.push(
        `${p}.claimMappings.username.expression: Invalid value: ${JSON.stringify(ue)}: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression`,
      );
    }
  }
}

/** userValidationRules: distinct expressions over the mapped user, each with its message. */
export function compileUserValidation(a: JwtAuthenticatorConfig, p: string, out: Problems): CompiledJwtAuthenticator['userValidation'] {
  const compile = celCompiler(out);
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
  return userValidation;
}
