import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { handleSelfSubjectReview } from '../handlers/self-subject-review';
import { makeServiceAccountTokenHandler } from '../handlers/serviceaccount-token';
import { makeTokenReviewHandler } from '../handlers/token-review';
import type { ResourceRequest } from '../handlers/context';
import type { AdmissionAttributes } from '../admission/admission';
import type { ResourceRegistry } from '../registry/builtin';
import type { StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import type { AnonymousPolicy } from '../authn/anonymous';
import type { Authenticator } from '../authn/authenticator';
import { AuthenticationConfigError, compileOidcFlags, type OidcFlags } from '../authn/authentication-config';
import { AuthenticationConfigController, type LoadedAuthenticationConfig } from '../authn/authentication-config-controller';
import { BootstrapTokenAuthenticator } from '../authn/bootstrap-token';
import { CertPool } from '../authn/cert-chain';
import { JwtAuthenticator, JwtAuthenticatorSet } from '../authn/jwt-authenticator';
import { AuthnLookupCaches } from '../authn/lookup-caches';
import type { MetricsRegistry } from '../authn/metrics';
import { httpsJsonFetcher, OidcKeySource, type FetchJson } from '../authn/oidc-keys';
import { RequestAuthenticator } from '../authn/request-authenticator';
import { RequestHeaderAuthenticator } from '../authn/request-header';
import { ensureGeneratedSigningKey, loadPublicKeyFiles, loadSigningKeyFile, type SaVerificationKey } from '../authn/service-account-keys';
import { ServiceAccountTokenAuthenticator, ServiceAccountTokenIssuer } from '../authn/service-account-token';
import { StoreObjectGetter } from '../authn/store-object-getter';
import { AudienceAgnosticToken, BearerTokenAuthenticator, TokenAuthenticatorUnion, type TokenAuthenticator } from '../authn/token-authenticator';
import { TokenFileAuthenticator } from '../authn/token-file';
import { TokenReviewer } from '../authn/token-reviewer';
import { loadWebhookClientConfig } from '../authn/webhook-client-config';
import { WebhookTokenAuthenticator, type TokenReviewVersion } from '../authn/webhook-token';
import { X509ClientCertAuthenticator } from '../authn/x509-client-cert';

/** Default --service-account-issuer: the in-cluster name of the API server (it is in the serving certificate). */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://svc.default.svc';

/** Every authentication setting of section 5, as the flags give them (paths, not contents). */
export interface AuthenticationOptions {
  /** PEM bundle verifying client certificates (--client-ca-file plus the server's own CA). */
  clientCaPem?: string;
  /** --token-auth-file. */
  tokenAuthFile?: string;
  /** --enable-bootstrap-token-auth. */
  enableBootstrapTokenAuth?: boolean;
  serviceAccount: {
    /** --service-account-issuer (repeatable): the first signs, all are accepted. Default DEFAULT_SERVICE_ACCOUNT_ISSUER. */
    issuers?: readonly string[];
    /** --service-account-key-file (repeatable): verification keys. */
    keyFiles?: readonly string[];
    /** --service-account-signing-key-file; absent: <dataDir>/pki/sa.key, generated once. */
    signingKeyFile?: string;
    /** --tls-private-key-file: the verification key when no --service-account-key-file is given (5.1). */
    tlsPrivateKeyFile?: string;
    /** --service-account-lookup, default true. */
    lookup?: boolean;
    /** --service-account-max-token-expiration in seconds (0: no cap). */
    maxTokenExpirationSeconds?: number;
  };
  /** --api-audiences; default the service account issuers. */
  apiAudiences?: readonly string[];
  /** --oidc-* (5.2); issuerUrl empty/absent means off. caFile is read here. */
  oidc?: Omit<OidcFlags, 'caPem'> & { caFile?: string };
  /** --authentication-config (5.3); refused together with oidc. */
  authenticationConfigFile?: string;
  /** --authentication-token-webhook-* (5.4). */
  webhook?: { configFile: string; version?: TokenReviewVersion; cacheTtlMs?: number; timeoutMs?: number };
  /** --requestheader-* (5.5); on when usernameHeaders is non-empty. */
  requestHeader?: { clientCaFile: string; usernameHeaders: readonly string[]; groupHeaders?: readonly string[]; extraHeadersPrefix?: readonly string[]; uidHeaders?: readonly string[]; allowedNames?: readonly string[] };
  /** --anonymous-auth; undefined when the flag was not given (then true, or the config file's anonymous section). */
  anonymousAuth?: boolean;
  /** Where a generated service account key is kept. */
  dataDir: string;
}

export interface AuthenticationDeps {
  store: ObjectStore;
  /** The store's watch cache: feeds the service account and bootstrap token lookup caches. */
  cache: WatchCache;
  registry: ResourceRegistry;
  metrics: MetricsRegistry;
  log: Logger;
  now: () => Date;
  /** The process's shared informers (feed the lookup caches); default a factory of their own. */
  informers?: StoreInformers;
  /** Admits TokenRequests (serviceaccounts/token creates); absent: not admitted. */
  admit?: (attrs: AdmissionAttributes) => Promise<void>;
  /** Override of the HTTPS fetcher for OIDC discovery and keys (tests); default per-issuer CA-aware fetcher. */
  fetchJson?: (caPem: string | undefined) => FetchJson;
}

type Handler = (r: ResourceRequest) => Promise<void>;

/** What the server wires in: see each field. */
export interface Authentication {
  /** The request authenticator: ApiServerOptions.authn. */
  request: RequestAuthenticator;
  /** All bearer token methods (TokenReview runs these). */
  tokens: TokenAuthenticator;
  tokenReviewer: TokenReviewer;
  serviceAccountIssuer: ServiceAccountTokenIssuer;
  apiAudiences: readonly string[];
  /** The virtual review resources, keyed "group/version/resource" as ApiServerOptions.virtual (they answer 405 to verbs other than create). */
  virtual: ReadonlyMap<string, Handler>;
  /** Sub-resource handlers keyed "group/resource/subresource" (merge into ApiServerOptions.subresources). */
  subresources: ReadonlyMap<string, Handler>;
  /** Where the generated signing key was written, when one was. */
  generatedSigningKeyPath?: string;
  /** Readiness checks (merge into ApiServerOptions.checks): the lookup caches have been listed. */
  checks: Array<{ name: string; check: () => string | undefined }>;
  /** Follows the lookup caches' watches, reloads the configuration file and fetches OIDC keys until the signal aborts. */
  run(signal: AbortSignal): Promise<void>;
}

function read(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new AuthenticationConfigError(what, [`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
}

/**
 * Builds every authentication method of section 5 from the options, in upstream's order:
 * authenticating proxy, client certificates, then bearer tokens (static file, service accounts,
 * bootstrap tokens, JWT/OIDC, webhook). Throws (with a message naming the flag or field) when a
 * file is unreadable or a configuration invalid, so the server refuses to start.
 */
export function buildAuthentication(o: AuthenticationOptions, d: AuthenticationDeps): Authentication {
  const log = d.log;
  const saIssuers = o.serviceAccount.issuers && o.serviceAccount.issuers.length > 0 ? [...o.serviceAccount.issuers] : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  const apiAudiences = o.apiAudiences && o.apiAudiences.length > 0 ? [...o.apiAudiences] : saIssuers;
  if (o.oidc?.issuerUrl && o.authenticationConfigFile) {
    throw new AuthenticationConfigError('flags', ['--authentication-config and --oidc-* flags are mutually exclusive']);
  }

  const keys = serviceAccountKeys(o);
  // TokenRequest reads the store itself (issuing is rare and should see the freshest account);
  // authentication reads the watch-fed caches, live only on a miss (lookup-caches.ts).
  const objects = new StoreObjectGetter(d.store, d.registry);
  const lookups = new AuthnLookupCaches(
    { store: d.store, cache: d.cache, registry: d.registry, log },
    { serviceAccounts: o.serviceAccount.lookup !== false, bootstrapTokens: !!o.enableBootstrapTokenAuth },
  );
  const issuer = new ServiceAccountTokenIssuer(keys.signing, saIssuers[0], d.now);
  const saAuthn = new ServiceAccountTokenAuthenticator({
    issuers: saIssuers,
    keys: keys.verify,
    ...(o.serviceAccount.lookup === false ? {} : { lookup: lookups.boundObjects }),
    now: d.now,
    log: log.child({ authn: 'service-account' }),
  });
  const jwt = jwtAuthentication(o, d, saIssuers, apiAudiences);
  const bearer = bearerTokenMethods(o, d, { saAuthn, lookups, jwt: jwt.set, apiAudiences });
  const methods = requestMethods(o, d, bearer.tokens, apiAudiences);

  const request = new RequestAuthenticator(
    () => methods,
    () => jwt.anonymous(),
    (method, err) => log.warn({ authn: method, err }, 'authentication method failed'),
  );
  const tokenReviewer = new TokenReviewer(bearer.tokens, apiAudiences);
  const tokenReview = makeTokenReviewHandler(tokenReviewer);
  const virtual = new Map<string, Handler>([
    ['authentication.svc.io/v1/tokenreviews', tokenReview],
    ['authentication.svc.io/v1beta1/tokenreviews', tokenReview],
    ['authentication.svc.io/v1/selfsubjectreviews', handleSelfSubjectReview],
    ['authentication.svc.io/v1beta1/selfsubjectreviews', handleSelfSubjectReview],
    ['authentication.svc.io/v1alpha1/selfsubjectreviews', handleSelfSubjectReview],
  ]);
  const maxExpirationSeconds = o.serviceAccount.maxTokenExpirationSeconds;
  const tokenHandler = makeServiceAccountTokenHandler({ issuer, objects, apiAudiences, ...(d.admit ? { admit: d.admit } : {}), ...(maxExpirationSeconds ? { maxExpirationSeconds } : {}) });

  return {
    request,
    tokens: bearer.tokens,
    tokenReviewer,
    serviceAccountIssuer: issuer,
    apiAudiences,
    virtual,
    subresources: new Map<string, Handler>([['/serviceaccounts/token', tokenHandler]]),
    ...(keys.generatedSigningKeyPath ? { generatedSigningKeyPath: keys.generatedSigningKeyPath } : {}),
    checks: [{ name: 'authentication-informers', check: () => (lookups.hasSynced() ? undefined : 'authentication lookup caches not synced') }],
    async run(signal) {
      // Warm the OIDC key caches so the first token does not wait for discovery.
      for (const a of jwt.set.authenticators) void a.warm();
      const aborted = new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
      await Promise.all([aborted, jwt.controller?.run(signal), lookups.run(signal)]);
      await bearer.webhook?.close();
    },
  };
}

/** Service account keys (5.1): the signing key (given or generated) and the verification keys. */
function serviceAccountKeys(o: AuthenticationOptions): { signing: ReturnType<typeof loadSigningKeyFile>; verify: SaVerificationKey[]; generatedSigningKeyPath?: string } {
  let generatedSigningKeyPath: string | undefined;
  const signing = o.serviceAccount.signingKeyFile
    ? loadSigningKeyFile(o.serviceAccount.signingKeyFile)
    : (() => {
        const g = ensureGeneratedSigningKey(o.dataDir);
        generatedSigningKeyPath = g.path;
        return g.key;
      })();
  let verify: SaVerificationKey[] = [];
  if (o.serviceAccount.keyFiles && o.serviceAccount.keyFiles.length > 0) verify = loadPublicKeyFiles(o.serviceAccount.keyFiles);
  else if (o.serviceAccount.tlsPrivateKeyFile) verify = loadPublicKeyFiles([o.serviceAccount.tlsPrivateKeyFile]);
  // Tokens this server signs always verify here, so service accounts work without extra flags.
  if (!verify.some((k) => k.kid === signing.kid)) verify.push({ key: signing.key, alg: signing.alg, kid: signing.kid });
  return { signing, verify, ...(generatedSigningKeyPath ? { generatedSigningKeyPath } : {}) };
}

/**
 * JWT authenticators from the --oidc-* flags or the configuration file (5.2, 5.3), and the
 * anonymous policy (the flag's, or the configuration file's as last loaded). With a file, its
 * controller reloads it and replaces the set.
 */
function jwtAuthentication(
  o: AuthenticationOptions,
  d: AuthenticationDeps,
  saIssuers: string[],
  apiAudiences: readonly string[],
): { set: JwtAuthenticatorSet; controller?: AuthenticationConfigController; anonymous: () => AnonymousPolicy } {
  const log = d.log;
  const fetcher = d.fetchJson ?? ((ca: string | undefined) => httpsJsonFetcher(ca));
  const set = new JwtAuthenticatorSet();
  const keySources = new Map<string, OidcKeySource>();
  const install = (compiled: LoadedAuthenticationConfig['jwt']) => {
    const next = compiled.map((c) => {
      const iss = c.config.issuer;
      // Keep fetched keys across reloads when the issuer's key location did not change.
      const sourceKey = `${iss.url}\n${iss.discoveryURL ?? ''}\n${iss.certificateAuthority ?? ''}`;
      let ks = keySources.get(sourceKey);
      if (!ks) {
        ks = new OidcKeySource({ issuerUrl: iss.url, ...(iss.discoveryURL ? { discoveryUrl: iss.discoveryURL } : {}), fetchJson: fetcher(iss.certificateAuthority), now: () => d.now().getTime(), log: log.child({ authn: 'jwt' }) });
        keySources.set(sourceKey, ks);
      }
      return new JwtAuthenticator(c, { keys: ks, apiAudiences, now: d.now, log: log.child({ authn: 'jwt', issuer: iss.url }) });
    });
    set.replace(next);
  };
  let anonymous: AnonymousPolicy = { enabled: o.anonymousAuth ?? true };
  let controller: AuthenticationConfigController | undefined;
  if (o.oidc?.issuerUrl) {
    const f = o.oidc;
    install([compileOidcFlags({ ...f, ...(f.caFile ? { caPem: read(f.caFile, '--oidc-ca-file') } : {}) }, { serviceAccountIssuers: saIssuers })]);
  } else if (o.authenticationConfigFile) {
    controller = new AuthenticationConfigController({
      path: o.authenticationConfigFile,
      validate: { serviceAccountIssuers: saIssuers },
      apply: (c) => {
        install(c.jwt);
        if (c.anonymous) anonymous = c.anonymous;
      },
      metrics: d.metrics,
      now: d.now,
      log: log.child({ component: 'authentication-config' }),
    });
    const first = controller.loadInitial();
    if (first.anonymous && o.anonymousAuth !== undefined) {
      throw new AuthenticationConfigError('flags', ['--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file']);
    }
  }
  return { set, ...(controller ? { controller } : {}), anonymous: () => anonymous };
}

/** Bearer token methods, in upstream's order: static file, service accounts, bootstrap tokens, JWT, webhook. */
function bearerTokenMethods(
  o: AuthenticationOptions,
  d: AuthenticationDeps,
  p: { saAuthn: TokenAuthenticator; lookups: AuthnLookupCaches; jwt: TokenAuthenticator; apiAudiences: readonly string[] },
): { tokens: TokenAuthenticator; webhook?: WebhookTokenAuthenticator } {
  const log = d.log;
  const { apiAudiences } = p;
  const tokenMethods: TokenAuthenticator[] = [];
  if (o.tokenAuthFile) tokenMethods.push(new AudienceAgnosticToken(TokenFileAuthenticator.fromFile(o.tokenAuthFile), apiAudiences));
  tokenMethods.push(p.saAuthn);
  if (o.enableBootstrapTokenAuth) {
    tokenMethods.push(new AudienceAgnosticToken(new BootstrapTokenAuthenticator(p.lookups.bootstrapSecrets, { now: d.now, log: log.child({ authn: 'bootstrap-token' }) }), apiAudiences));
  }
  tokenMethods.push(p.jwt);
  let webhook: WebhookTokenAuthenticator | undefined;
  if (o.webhook?.configFile) {
    webhook = new WebhookTokenAuthenticator({
      client: loadWebhookClientConfig(o.webhook.configFile),
      ...(o.webhook.version ? { version: o.webhook.version } : {}),
      ...(o.webhook.cacheTtlMs !== undefined ? { cacheTtlMs: o.webhook.cacheTtlMs } : {}),
      ...(o.webhook.timeoutMs !== undefined ? { timeoutMs: o.webhook.timeoutMs } : {}),
      apiAudiences,
      log: log.child({ authn: 'webhook' }),
    });
    tokenMethods.push(webhook);
  }
  return { tokens: new TokenAuthenticatorUnion(() => tokenMethods), ...(webhook ? { webhook } : {}) };
}

/** Request methods: authenticating proxy, client certificates, bearer tokens (5.5, 5.1). */
function requestMethods(o: AuthenticationOptions, d: AuthenticationDeps, tokens: TokenAuthenticator, apiAudiences: readonly string[]): Authenticator[] {
  const methods: Authenticator[] = [];
  const rh = o.requestHeader;
  if (rh && rh.usernameHeaders.length > 0) {
    if (!rh.clientCaFile) throw new AuthenticationConfigError('flags', ['--requestheader-client-ca-file: Required value: the authenticating proxy needs a CA to verify its client certificate']);
    const pem = read(rh.clientCaFile, '--requestheader-client-ca-file');
    methods.push(
      new RequestHeaderAuthenticator({
        usernameHeaders: rh.usernameHeaders,
        groupHeaders: rh.groupHeaders ?? [],
        extraHeaderPrefixes: rh.extraHeadersPrefix ?? [],
        ...(rh.uidHeaders ? { uidHeaders: rh.uidHeaders } : {}),
        allowedNames: rh.allowedNames ?? [],
        clientCa: new CertPool(pem, rh.clientCaFile),
        now: d.now,
      }),
    );
  }
  if (o.clientCaPem) methods.push(new X509ClientCertAuthenticator(new CertPool(o.clientCaPem, '--client-ca-file'), d.now));
  methods.push(new BearerTokenAuthenticator(tokens, apiAudiences, (err) => d.log.debug({ err: (err as Error).message }, 'bearer token rejected')));
  return methods;
}
