import test from 'ava';
import {
  AuthenticationConfigError,
  compileAuthenticationConfiguration,
  compileOidcFlags,
  MAX_JWT_AUTHENTICATORS,
  parseAuthenticationConfiguration,
  parseRequiredClaims,
} from '../../../../apiserver/authn/authentication-config';

const good = `apiVersion: apiserver.config.svc.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://idp.example.com
    audiences: [svc, other]
    audienceMatchPolicy: MatchAny
  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.exp - claims.nbf <= 86400'
    message: total token lifetime must not exceed 24 hours
  claimMappings:
    username:
      expression: 'claims.email_verified ? claims.email : claims.sub'
    groups:
      claim: groups
      prefix: 'oidc:'
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: username cannot use reserved system prefix
anonymous:
  enabled: true
  conditions:
  - path: /livez
  - path: /readyz
`;

function problems(text: string, opts: { sa?: string[] } = {}): string[] {
  try {
    compileAuthenticationConfiguration(parseAuthenticationConfiguration(text, 'auth.yaml'), 'auth.yaml', { serviceAccountIssuers: opts.sa ?? ['https://svc.default.svc'] });
  } catch (err) {
    if (err instanceof AuthenticationConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

function jwtDoc(jwt: string, extra = ''): string {
  return `apiVersion: apiserver.config.svc.io/v1\nkind: AuthenticationConfiguration\njwt:\n${jwt}${extra}`;
}

const minimal = (issuer = 'https://idp.example.com', mapping = "      claim: sub\n      prefix: ''\n") => `- issuer:\n    url: ${issuer}\n    audiences: [svc]\n  claimMappings:\n    username:\n${mapping}`;

test('a full configuration parses and compiles', (t) => {
  const c = compileAuthenticationConfiguration(parseAuthenticationConfiguration(good, 'auth.yaml'), 'auth.yaml');
  t.is(c.jwt.length, 1);
  const a = c.jwt[0];
  t.is(a.username.kind, 'expression');
  t.deepEqual(a.groups, { kind: 'claim', claim: 'groups', prefix: 'oidc:' });
  t.is(a.claimValidation.length, 2);
  t.is(a.extra[0].key, 'example.com/tenant');
  t.is(a.userValidation.length, 1);
  t.deepEqual(c.anonymous, { enabled: true, conditions: [{ path: '/livez' }, { path: '/readyz' }] });
  t.deepEqual(a.signingAlgorithms, ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512']);
});

test('malformed files are refused with the field named', (t) => {
  t.deepEqual(problems('kind: Nope\napiVersion: v1\n'), [
    'kind: Invalid value: "Nope": must be AuthenticationConfiguration',
    'apiVersion: Invalid value: "v1": must be apiserver.config.svc.io/v1',
  ]);
  t.deepEqual(problems(jwtDoc(minimal().replace('audiences', 'audience'))), ['jwt[0].issuer.audience: unknown field']);
  t.deepEqual(problems(jwtDoc(minimal().replace('audiences: [svc]', 'audiences: []'))), ['jwt[0].issuer.audiences: Required value: at least one issuer.audiences is required']);
  t.regex(problems(jwtDoc(minimal('http://idp.example.com')))[0], /^jwt\[0\]\.issuer\.url: .*must be https/);
  t.regex(problems(jwtDoc(minimal('https://idp.example.com?x=1')))[0], /query/);
  t.regex(problems(jwtDoc(minimal() + minimal()))[0], /^jwt\[1\]\.issuer\.url: Duplicate value/);
  t.regex(problems(jwtDoc(minimal('https://svc.default.svc')))[0], /^jwt\[0\]\.issuer\.url: .*disallowed issuers/);
  t.regex(problems(jwtDoc(minimal(undefined, '      claim: sub\n')))[0], /^jwt\[0\]\.claimMappings\.username\.prefix: Required value/);
  t.regex(problems(jwtDoc(minimal(undefined, "      claim: sub\n      expression: claims.sub\n")))[0], /claim and expression can't both be set/);
  t.regex(problems(jwtDoc(minimal(undefined, '      expression: claims.sub +\n')))[0], /^jwt\[0\]\.claimMappings\.username\.expression: Invalid value: .*compilation failed/);
  t.regex(problems(jwtDoc(minimal(undefined, '      expression: claim.sub\n')))[0], /undeclared reference to 'claim'/);
  t.regex(problems(jwtDoc(minimal(undefined, '      expression: claims.email\n')))[0], /claims\.email_verified must be used/);
  t.deepEqual(problems(jwtDoc(minimal(undefined, '      expression: claims.email\n') + '  claimValidationRules:\n  - expression: claims.email_verified == true\n')), []);
  t.regex(problems(jwtDoc(minimal().replace('audiences: [svc]', 'audiences: [a, b]')))[0], /audienceMatchPolicy must be MatchAny/);
  const extra = (key: string) => jwtDoc(minimal() + `    extra:\n    - key: ${key}\n      valueExpression: claims.x\n`);
  t.regex(problems(extra('tenant'))[0], /extra\[0\]\.key: .*domain-prefixed/);
  t.regex(problems(extra('Example.com/x')).join(), /lowercase/);
  t.regex(problems(extra('svc.io/x'))[0], /reserved/);
  t.regex(problems(extra('a.svc.io/x'))[0], /reserved/);
  t.regex(
    problems(`apiVersion: apiserver.config.svc.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: false\n  conditions:\n  - path: /livez\n`)[0],
    /enabled should be set to true when conditions are defined/,
  );
  t.regex(problems('apiVersion: apiserver.config.svc.io/v1\nkind: AuthenticationConfiguration\nanonymous: {}\n')[0], /anonymous\.enabled: Required value/);
  t.regex(problems(jwtDoc(minimal() + '  userValidationRules:\n  - message: x\n'))[0], /userValidationRules\[0\]\.expression: Required value/);
  t.regex(problems(jwtDoc(minimal() + '  claimValidationRules:\n  - claim: a\n    message: m\n'))[0], /message can't be set when claim is set/);
  t.regex(problems('jwt: [\n')[0], /invalid YAML/);
});

test(`at most ${MAX_JWT_AUTHENTICATORS} JWT authenticators`, (t) => {
  const many = Array.from({ length: MAX_JWT_AUTHENTICATORS + 1 }, (_, i) => minimal(`https://idp${i}.example.com`)).join('');
  t.deepEqual(problems(jwtDoc(many)), [`jwt: Too many: ${MAX_JWT_AUTHENTICATORS + 1}: must have at most ${MAX_JWT_AUTHENTICATORS} items`]);
  const enough = Array.from({ length: MAX_JWT_AUTHENTICATORS }, (_, i) => minimal(`https://idp${i}.example.com`)).join('');
  t.deepEqual(problems(jwtDoc(enough)), []);
});

test('--oidc-* flags become one authenticator with upstream prefix defaults', (t) => {
  const a = compileOidcFlags({ issuerUrl: 'https://idp.example.com', clientId: 'svc' });
  t.deepEqual(a.username, { kind: 'claim', claim: 'sub', prefix: 'https://idp.example.com#' });
  t.deepEqual(a.signingAlgorithms, ['RS256']);
  t.deepEqual(a.config.issuer.audiences, ['svc']);
  t.deepEqual(compileOidcFlags({ issuerUrl: 'https://i.example', clientId: 'c', usernameClaim: 'email' }).username, { kind: 'claim', claim: 'email', prefix: '' });
  t.deepEqual(compileOidcFlags({ issuerUrl: 'https://i.example', clientId: 'c', usernamePrefix: '-' }).username, { kind: 'claim', claim: 'sub', prefix: '' });
  t.deepEqual(compileOidcFlags({ issuerUrl: 'https://i.example', clientId: 'c', usernamePrefix: 'oidc:' }).username, { kind: 'claim', claim: 'sub', prefix: 'oidc:' });
  const g = compileOidcFlags({ issuerUrl: 'https://i.example', clientId: 'c', groupsClaim: 'groups', groupsPrefix: 'g:', requiredClaims: { hd: 'example.com' }, signingAlgs: ['ES256', 'RS256'] });
  t.deepEqual(g.groups, { kind: 'claim', claim: 'groups', prefix: 'g:' });
  t.deepEqual(g.claimValidation, [{ kind: 'claim', claim: 'hd', requiredValue: 'example.com' }]);
  t.deepEqual(g.signingAlgorithms, ['ES256', 'RS256']);
  t.throws(() => compileOidcFlags({ issuerUrl: 'https://i.example', clientId: '' }), { message: /--oidc-client-id/ });
  t.throws(() => compileOidcFlags({ issuerUrl: 'https://i.example', clientId: 'c', signingAlgs: ['HS256'] }), { message: /--oidc-signing-algs: Unsupported value: "HS256"/ });
  t.throws(() => compileOidcFlags({ issuerUrl: 'http://i.example', clientId: 'c' }), { message: /--oidc-issuer-url: .*https/ });
  t.deepEqual(parseRequiredClaims(['a=b', 'c=d=e']), { a: 'b', c: 'd=e' });
  t.throws(() => parseRequiredClaims(['novalue']), { message: /key=value/ });
});
