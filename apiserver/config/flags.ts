import { formatFlagUsages } from '../../common/flag-usage';
import { parseDuration } from '../api/duration';
import { parseFeatureGatesFlag } from '../../common/feature-gates';
import { ADMISSION_PLUGINS, selectAdmissionPlugins } from './admission-plugins';
import { apiServerGates } from './feature-gates';
import { parseRuntimeConfig, type RuntimeConfig } from './runtime-config';

/**
 * svc-apiserver's command line: kube-apiserver's flag names where one exists (--bind-address,
 * --secure-port, --tls-cert-file, ...), pflag syntax (--flag=value, --flag value, bare bools).
 */
export interface ApiServerFlags {
  bindAddress: string;
  securePort: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCaFile?: string;
  tokenAuthFile?: string;
  /** Client certificate and key presented to node agents (pods/log, nodes/proxy); default <data-dir>/pki/apiserver-kubelet-client.*. */
  kubeletClientCertificate?: string;
  kubeletClientKey?: string;
  /** CA bundle that verifies node agents' serving certificates; unset skips verification (upstream's default). */
  kubeletCertificateAuthority?: string;
  dataDir: string;
  etcdServers: string[];
  etcdCaFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  etcdPrefix: string;
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  /** --watch-cache-max-bytes: bound of the watch cache's in-memory history (besides its 5 minutes). */
  watchCacheMaxBytes: number;
  nodeMonitorGracePeriodMs: number;
  /** --event-ttl: how long an event is kept after its last write (upstream's default 1h). */
  eventTtlMs: number;
  /** Shortest lifetime of an in-process informer's watch; each lasts a random time between it and twice it (client-go's reflector: 5 min). */
  controllerWatchTimeoutMs: number;
  /** The admission plugins that run, in upstream's order (--enable-admission-plugins / --disable-admission-plugins over the defaults). */
  admissionPlugins: string[];
  /** The --audit-* flags (filters/audit/, built by wiring/audit.ts). */
  audit: {
    policyFile?: string;
    logPath?: string;
    logMaxAgeDays: number;
    logMaxBackups: number;
    logMaxSizeMB: number;
    webhookConfigFile?: string;
    webhookBatchMaxSize: number;
    webhookBatchMaxWaitMs: number;
    webhookBufferSize: number;
    webhookInitialBackoffMs: number;
  };
  /** --proxy-client-cert-file / --proxy-client-key-file: the aggregator's client identity toward aggregated servers. */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  /** --admission-control-config-file: per-plugin configuration (config/admission-config.ts), read at start. */
  admissionControlConfigFile?: string;
  /** DefaultTolerationSeconds admission (upstream flag names). */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  enableBootstrapTokenAuth: boolean;
  /** --serve-k8s-io-groups: every svc.io group is also served under its k8s.io name (issue 17). */
  serveK8sIoGroups: boolean;
  leaderElect: boolean;
  leaderElectLeaseDurationMs: number;
  leaderElectRenewDeadlineMs: number;
  leaderElectRetryPeriodMs: number;
  clusterSigningDurationMs: number;
  logLevel: string;
  /** --authorization-mode split on commas; undefined when the flag is absent (then buildAuthorizers uses Node,RBAC unless --authorization-config is set). */
  authorizationMode?: string[];
  authorizationPolicyFile?: string;
  authorizationWebhookConfigFile?: string;
  authorizationWebhookCacheAuthorizedTtlMs?: number;
  authorizationWebhookCacheUnauthorizedTtlMs?: number;
  authorizationWebhookVersion?: string;
  authorizationConfig?: string;
  /** Authentication (spec 5): see AuthenticationOptions for each. */
  authn: {
    serviceAccountKeyFiles: string[];
    serviceAccountSigningKeyFile?: string;
    serviceAccountIssuers: string[];
    serviceAccountLookup: boolean;
    serviceAccountMaxTokenExpirationS: number;
    apiAudiences?: string[];
    oidcIssuerUrl?: string;
    oidcClientId?: string;
    oidcUsernameClaim: string;
    oidcUsernamePrefix?: string;
    oidcGroupsClaim?: string;
    oidcGroupsPrefix?: string;
    oidcCaFile?: string;
    oidcRequiredClaims: string[];
    oidcSigningAlgs: string[];
    authenticationConfig?: string;
    webhookConfigFile?: string;
    webhookCacheTtlMs: number;
    webhookVersion: 'v1' | 'v1beta1';
    requestheaderUsernameHeaders: string[];
    requestheaderGroupHeaders: string[];
    requestheaderExtraHeadersPrefix: string[];
    requestheaderUidHeaders: string[];
    requestheaderAllowedNames: string[];
    requestheaderClientCaFile?: string;
    /** undefined when --anonymous-auth was not given (then the default, or the config file's anonymous section). */
    anonymousAuth?: boolean;
  };
  /** --feature-gates: the gates switched on. */
  featureGates: Set<string>;
  /** --runtime-config (config/runtime-config.ts), applied to the registry by wiring/storage.ts. */
  runtimeConfig: RuntimeConfig;
  /** Upstream's warnings for GA and deprecated gates set explicitly, logged at start. */
  featureGateWarnings: string[];
  help: boolean;
  version: boolean;
}

/** list: comma-separated; strings: repeatable, each occurrence one value (paths may hold commas). */
export type Kind = 'string' | 'int' | 'bool' | 'duration' | 'list' | 'strings';

export interface Def {
  kind: Kind;
  usage: string;
  def?: string;
}

export { CBOR_GATE } from './feature-gates';

const defs: Record<string, Def> = {
  'bind-address': { kind: 'string', usage: 'IP address to listen on for --secure-port', def: '0.0.0.0' },
  'secure-port': { kind: 'int', usage: 'Port to serve HTTPS on', def: '6443' },
  'kubelet-client-certificate': { kind: 'string', usage: 'Client certificate presented to node agents (pods/log, nodes/proxy); default the generated apiserver-kubelet-client certificate' },
  'kubelet-client-key': { kind: 'string', usage: 'Key of --kubelet-client-certificate' },
  'kubelet-certificate-authority': { kind: 'string', usage: 'CA bundle verifying node agents\' serving certificates (default: not verified, as upstream)' },
  'tls-cert-file': { kind: 'string', usage: 'x509 serving certificate; without it the server makes its own CA and certificate under --data-dir/pki' },
  'tls-private-key-file': { kind: 'string', usage: 'Private key matching --tls-cert-file' },
  'client-ca-file': { kind: 'string', usage: 'CA bundle that verifies client certificates (CN = user, O = groups); the generated CA is always trusted too' },
  'token-auth-file': { kind: 'string', usage: 'Static token file: CSV lines token,user,uid[,"group1,group2"]' },
  'data-dir': { kind: 'string', usage: 'Directory for the embedded SQLite store and generated credentials', def: '/var/lib/svc-apiserver' },
  'etcd-servers': { kind: 'list', usage: 'etcd endpoints (http://host:port,...); when set, etcd replaces the embedded store' },
  'etcd-cafile': { kind: 'string', usage: 'CA bundle that verifies the etcd servers' },
  'etcd-certfile': { kind: 'string', usage: 'Client certificate presented to etcd' },
  'etcd-keyfile': { kind: 'string', usage: 'Key of --etcd-certfile' },
  'etcd-prefix': { kind: 'string', usage: 'Prefix of every key this server stores in etcd', def: '/registry-svc' },
  'livez-grace-period': { kind: 'duration', usage: 'Time after start during which livez reports only ping', def: '0s' },
  'shutdown-delay-duration': {
    kind: 'duration',
    usage: 'On SIGTERM, time readyz fails before the listener closes; watches then end, and requests still in flight get 5s before every open connection is cut',
    def: '0s',
  },
  'watch-cache-max-bytes': {
    kind: 'int',
    usage:
      'Most bytes of events the watch cache keeps in memory besides its 5-minute window (older resumes replay from the store): the stored size of each object and its previous version, plus its rendering once sent',
    def: String(32 * 1024 * 1024),
  },
  'node-monitor-grace-period': { kind: 'duration', usage: 'How long a node may stay silent before it is marked Unknown', def: '50s' },
  'event-ttl': { kind: 'duration', usage: 'How long an Event is kept after its last write (core/v1 and events.k8s.io/v1 alike); expired events are removed, also those that expired while the server was down', def: '1h' },
  'controller-watch-timeout': {
    kind: 'duration',
    usage: 'Shortest lifetime of each watch of the in-process informers (control loops, scheduler, authorization and authentication caches): each ends after a random time between it and twice it, and its informer lists again, as upstream\'s reflectors (5m)',
    def: '5m',
  },
  'enable-admission-plugins': {
    kind: 'list',
    usage: `Admission plugins to turn on besides the default ones (${ADMISSION_PLUGINS.filter((p) => p.defaultOn).map((p) => p.name).join(', ')}); they run in a fixed order whatever the order here. Known: ${ADMISSION_PLUGINS.map((p) => p.name).join(', ')}`,
  },
  'disable-admission-plugins': { kind: 'list', usage: 'Admission plugins to turn off, default ones included' },
  'proxy-client-cert-file': { kind: 'string', usage: 'Client certificate svc-apiserver presents to aggregated API servers (they trust it through their --requestheader-client-ca-file); with --proxy-client-key-file' },
  'proxy-client-key-file': { kind: 'string', usage: 'Key of --proxy-client-cert-file' },
  'audit-policy-file': { kind: 'string', usage: 'Audit policy (audit.k8s.io/v1 Policy); without it nothing is audited' },
  'audit-log-path': { kind: 'string', usage: 'Write audit events to this file, one JSON object per line (mode 0600); "-" for standard output' },
  'audit-log-maxage': { kind: 'int', usage: 'Days to keep rotated audit log files (0: no limit)', def: '0' },
  'audit-log-maxbackup': { kind: 'int', usage: 'Rotated audit log files to keep (0: no limit)', def: '0' },
  'audit-log-maxsize': { kind: 'int', usage: 'Megabytes an audit log file may reach before it is rotated (0: never rotated)', def: '0' },
  'audit-webhook-config-file': { kind: 'string', usage: 'kubeconfig naming the remote service audit events are sent to in batches' },
  'audit-webhook-batch-max-size': { kind: 'int', usage: 'Most events in one audit webhook batch', def: '400' },
  'audit-webhook-batch-max-wait': { kind: 'duration', usage: 'Longest an audit event waits for its batch to be sent', def: '30s' },
  'audit-webhook-batch-buffer-size': { kind: 'int', usage: 'Audit events buffered for the webhook before new ones are dropped (counted in apiserver_audit_error_total)', def: '10000' },
  'audit-webhook-initial-backoff': { kind: 'duration', usage: 'Wait before retrying a failed audit webhook batch (grows 1.5 times per attempt, 5 attempts)', def: '10s' },
  'admission-control-config-file': { kind: 'string', usage: 'AdmissionConfiguration file (apiserver.config.k8s.io/v1) with the configuration of admission plugins that take one (PodSecurity: defaults and exemptions)' },
  'default-not-ready-toleration-seconds': { kind: 'int', usage: 'tolerationSeconds of the not-ready:NoExecute toleration added to pods that have none (DefaultTolerationSeconds admission)', def: '300' },
  'default-unreachable-toleration-seconds': { kind: 'int', usage: 'tolerationSeconds of the unreachable:NoExecute toleration added to pods that have none (DefaultTolerationSeconds admission)', def: '300' },
  'enable-bootstrap-token-auth': { kind: 'bool', usage: 'Accept bootstrap tokens (Secrets of type bootstrap.svc.io/token in svc-system) and clean up expired ones', def: 'false' },
  'serve-k8s-io-groups': {
    kind: 'bool',
    usage:
      'Also serve every svc.io API group under its k8s.io name (rbac.authorization.k8s.io, coordination.k8s.io, ...), as stock clients use them: the same objects, listed in discovery and OpenAPI under both names',
    def: 'true',
  },
  'cluster-signing-duration': { kind: 'duration', usage: 'Longest validity of certificates the CSR signer issues', def: '8760h' },
  'leader-elect': { kind: 'bool', usage: 'Run the control loops only on the replica holding the svc-system/svc-controller-manager Lease', def: 'true' },
  'leader-elect-lease-duration': { kind: 'duration', usage: 'How long followers wait after the last renewal before taking over', def: '15s' },
  'leader-elect-renew-deadline': { kind: 'duration', usage: 'How long the leader retries renewing before it stops leading', def: '10s' },
  'leader-elect-retry-period': { kind: 'duration', usage: 'Interval between acquire and renew attempts', def: '2s' },
  'anonymous-auth': { kind: 'bool', usage: 'Allow anonymous requests (user system:anonymous) where authorization permits (default true)' },
  'service-account-key-file': { kind: 'strings', usage: 'PEM file with RSA or ECDSA keys that verify service account tokens (repeatable; default the signing key)' },
  'service-account-signing-key-file': { kind: 'string', usage: 'PEM private key that signs service account tokens (default <data-dir>/pki/sa.key, generated once)' },
  'service-account-issuer': { kind: 'strings', usage: 'Issuer of service account tokens (repeatable: the first signs, all are accepted)', def: 'https://svc.default.svc' },
  'service-account-lookup': { kind: 'bool', usage: 'Reject tokens of service accounts or bound objects that no longer exist', def: 'true' },
  'service-account-max-token-expiration': { kind: 'duration', usage: 'Longest validity of issued service account tokens (0: no cap)', def: '0s' },
  'api-audiences': { kind: 'list', usage: 'Audiences the API accepts in tokens (default the service account issuers)' },
  'oidc-issuer-url': { kind: 'string', usage: 'OpenID Connect issuer (https); enables OIDC id_token authentication' },
  'oidc-client-id': { kind: 'string', usage: 'Audience every OIDC token must be issued to' },
  'oidc-username-claim': { kind: 'string', usage: 'Claim used as the user name', def: 'sub' },
  'oidc-username-prefix': { kind: 'string', usage: 'Prefix for OIDC user names ("-" disables; default <issuer>#, except for email)' },
  'oidc-groups-claim': { kind: 'string', usage: 'Claim holding the user\'s groups' },
  'oidc-groups-prefix': { kind: 'string', usage: 'Prefix for OIDC group names' },
  'oidc-ca-file': { kind: 'string', usage: 'CA that verifies the OIDC provider (default the host roots)' },
  'oidc-required-claim': { kind: 'strings', usage: 'key=value a token must carry (repeatable)' },
  'oidc-signing-algs': { kind: 'list', usage: 'Accepted signing algorithms', def: 'RS256' },
  'authentication-config': { kind: 'string', usage: 'AuthenticationConfiguration file (apiserver.config.svc.io/v1); reloaded on change; not with --oidc-*' },
  'authentication-token-webhook-config-file': { kind: 'string', usage: 'Kubeconfig-format file naming the token review webhook' },
  'authentication-token-webhook-cache-ttl': { kind: 'duration', usage: 'How long webhook token decisions are cached', def: '2m' },
  'authentication-token-webhook-version': { kind: 'string', usage: 'TokenReview version sent to the webhook: v1 or v1beta1', def: 'v1beta1' },
  'requestheader-username-headers': { kind: 'list', usage: 'Headers an authenticating proxy puts the user name in (enables request-header authentication)' },
  'requestheader-group-headers': { kind: 'list', usage: 'Headers holding the proxy user\'s groups' },
  'requestheader-extra-headers-prefix': { kind: 'list', usage: 'Header prefixes whose headers become user extras' },
  'requestheader-uid-headers': { kind: 'list', usage: 'Headers holding the proxy user\'s uid' },
  'requestheader-allowed-names': { kind: 'list', usage: 'Common names the proxy\'s client certificate may have (default any)' },
  'requestheader-client-ca-file': { kind: 'string', usage: 'CA that verifies the authenticating proxy\'s client certificate' },
  'log-level': { kind: 'string', usage: 'trace, debug, info, warn, error or silent', def: 'info' },
  'authorization-mode': { kind: 'list', usage: 'Ordered list of authorization modes: AlwaysAllow, AlwaysDeny, ABAC, RBAC, Node, Webhook (default Node,RBAC)' },
  'authorization-policy-file': { kind: 'string', usage: 'ABAC policy file: one JSON Policy per line (with --authorization-mode=ABAC)' },
  'authorization-webhook-config-file': { kind: 'string', usage: 'Kubeconfig-format file naming the authorization webhook (with --authorization-mode=Webhook)' },
  'authorization-webhook-cache-authorized-ttl': { kind: 'duration', usage: 'How long to cache allowed webhook decisions (default 5m0s)' },
  'authorization-webhook-cache-unauthorized-ttl': { kind: 'duration', usage: 'How long to cache denied webhook decisions (default 30s)' },
  'authorization-webhook-version': { kind: 'string', usage: 'SubjectAccessReview version sent to the webhook: v1 or v1beta1 (default v1beta1)' },
  'authorization-config': { kind: 'string', usage: 'AuthorizationConfiguration file (apiserver.config.svc.io/v1); not with --authorization-mode or the webhook flags' },
  'runtime-config': { kind: 'list', usage: 'API versions to serve or not: key[=true|false] pairs with keys api/all, api/ga, api/beta, api/alpha, <group>/<version> or <group>/<version>/<resource> (alpha versions and betas newer than 1.22 are off by default)' },
  'feature-gates': { kind: 'list', usage: `Feature gates, Name=true|false: ${apiServerGates.usage()}` },
  help: { kind: 'bool', usage: 'Print this help and exit', def: 'false' },
  version: { kind: 'bool', usage: 'Print the version and exit', def: 'false' },
};

/** The flag table as defined here, read by the generated reference (docs/reference/apiserver-flags.md). */
export const apiServerFlagDefs: Readonly<Record<string, Readonly<Def>>> = defs;

export class FlagError extends Error {}

/** The gates switched on (config/feature-gates.ts); a malformed, unknown or locked gate is a FlagError as upstream words it. */
function featureGates(pairs: readonly string[]): { on: Set<string>; warnings: string[] } {
  const overrides: Record<string, boolean> = {};
  for (const p of pairs) {
    let parsed: Record<string, boolean>;
    try {
      parsed = parseFeatureGatesFlag(p);
    } catch (err) {
      throw new FlagError(`invalid argument "${p}" for --feature-gates: ${(err as Error).message}`);
    }
    for (const [name, value] of Object.entries(parsed)) {
      const why = apiServerGates.check(name, value);
      if (why) throw new FlagError(`invalid argument "${p}" for --feature-gates: ${why}`);
      overrides[name] = value;
    }
  }
  const values = apiServerGates.resolve(overrides);
  return { on: new Set(Object.entries(values).filter(([, v]) => v).map(([n]) => n)), warnings: apiServerGates.warnings(overrides) };
}

function runtimeConfig(pairs: readonly string[]): RuntimeConfig {
  const cfg = parseRuntimeConfig(pairs);
  if ('error' in cfg) throw new FlagError(`invalid argument "${pairs.join(',')}" for --runtime-config: ${cfg.error}`);
  return cfg;
}

/** The chosen admission plugins; an unknown or contradictory name is a FlagError naming its flag (upstream's messages). */
function admissionPlugins(enable: string[] | undefined, disable: string[] | undefined): string[] {
  const chosen = selectAdmissionPlugins(enable, disable);
  if ('errors' in chosen) throw new FlagError(`invalid admission plugin flags: ${chosen.errors.join('; ')}`);
  return chosen.plugins;
}

/** The flags on the command line (pflag syntax): the last value of each, every value of the repeatable ones. */
function scan(argv: readonly string[]): { values: Map<string, string>; repeated: Map<string, string[]> } {
  const values = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h') {
      values.set('help', 'true');
      continue;
    }
    if (!a.startsWith('--')) throw new FlagError(`unexpected argument "${a}": svc-apiserver takes only flags (see --help)`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    const def = defs[name];
    if (!def) throw new FlagError(`unknown flag: --${name} (see --help)`);
    let v: string;
    if (eq >= 0) v = a.slice(eq + 1);
    else if (def.kind === 'bool') v = 'true';
    else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: --${name}`);
      v = argv[++i];
    }
    if (def.kind === 'strings') repeated.set(name, [...(repeated.get(name) ?? []), v]);
    values.set(name, v);
  }
  return { values, repeated };
}

/** Typed readers of the given flags (else their defaults); an invalid value throws FlagError naming the flag. */
function readers(values: Map<string, string>, repeated: Map<string, string[]>) {
  const get = (n: string) => values.get(n) ?? defs[n].def;
  const list = (n: string) => (values.has(n) ? get(n)!.split(',').map((x) => x.trim()).filter(Boolean) : undefined);
  const strings = (n: string) => repeated.get(n) ?? [];
  const str = (n: string) => get(n) || undefined;
  const int = (n: string) => {
    const v = get(n)!;
    if (!/^\d+$/.test(v)) throw new FlagError(`invalid argument "${v}" for --${n}: must be a non-negative integer`);
    return Number(v);
  };
  const bool = (n: string) => {
    const v = get(n)!;
    if (v !== 'true' && v !== 'false') throw new FlagError(`invalid argument "${v}" for --${n}: must be true or false`);
    return v === 'true';
  };
  const dur = (n: string) => {
    try {
      return parseDuration(get(n)!);
    } catch (err) {
      throw new FlagError(`invalid argument "${get(n)}" for --${n}: ${(err as Error).message}`);
    }
  };
  const oneOf = <T extends string>(n: string, allowed: readonly T[]): T => {
    const v = get(n)!;
    if (!(allowed as readonly string[]).includes(v)) throw new FlagError(`invalid argument "${v}" for --${n}: must be one of ${allowed.join(', ')}`);
    return v as T;
  };
  return { values, get, list, strings, str, int, bool, dur, oneOf };
}

type Readers = ReturnType<typeof readers>;

export function parseFlags(argv: readonly string[]): ApiServerFlags {
  const { values, repeated } = scan(argv);
  const r = readers(values, repeated);
  const { get, list, str, int, bool, dur } = r;
  const port = int('secure-port');
  if (port < 1 || port > 65535) throw new FlagError(`invalid argument "${port}" for --secure-port: must be 1-65535`);
  const gates = featureGates(list('feature-gates') ?? []);
  if (!gates.on.has('StructuredAuthenticationConfiguration') && str('authentication-config')) {
    throw new FlagError('--authentication-config can only be used when the StructuredAuthenticationConfiguration feature gate is enabled');
  }
  if (!!str('tls-cert-file') !== !!str('tls-private-key-file')) throw new FlagError('--tls-cert-file and --tls-private-key-file must be set together');
  if (!!str('kubelet-client-certificate') !== !!str('kubelet-client-key')) throw new FlagError('--kubelet-client-certificate and --kubelet-client-key must be set together');
  if (!!str('proxy-client-cert-file') !== !!str('proxy-client-key-file')) throw new FlagError('--proxy-client-cert-file and --proxy-client-key-file must be set together');
  if (dur('leader-elect-renew-deadline') >= dur('leader-elect-lease-duration')) {
    throw new FlagError('--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration');
  }
  if (dur('controller-watch-timeout') <= 0) throw new FlagError('--controller-watch-timeout must be positive');
  if (dur('event-ttl') <= 0) throw new FlagError('--event-ttl must be positive');
  const level = get('log-level')!;
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(level)) throw new FlagError(`invalid argument "${level}" for --log-level`);
  return {
    bindAddress: get('bind-address')!,
    securePort: port,
    tlsCertFile: str('tls-cert-file'),
    tlsPrivateKeyFile: str('tls-private-key-file'),
    clientCaFile: str('client-ca-file'),
    tokenAuthFile: str('token-auth-file'),
    kubeletClientCertificate: str('kubelet-client-certificate'),
    kubeletClientKey: str('kubelet-client-key'),
    kubeletCertificateAuthority: str('kubelet-certificate-authority'),
    dataDir: get('data-dir')!,
    etcdServers: (str('etcd-servers') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    etcdCaFile: str('etcd-cafile'),
    etcdCertFile: str('etcd-certfile'),
    etcdKeyFile: str('etcd-keyfile'),
    etcdPrefix: get('etcd-prefix')!,
    livezGracePeriodMs: dur('livez-grace-period'),
    shutdownDelayMs: dur('shutdown-delay-duration'),
    watchCacheMaxBytes: int('watch-cache-max-bytes'),
    nodeMonitorGracePeriodMs: dur('node-monitor-grace-period'),
    eventTtlMs: dur('event-ttl'),
    controllerWatchTimeoutMs: dur('controller-watch-timeout'),
    admissionPlugins: admissionPlugins(list('enable-admission-plugins'), list('disable-admission-plugins')),
    admissionControlConfigFile: str('admission-control-config-file'),
    proxyClientCertFile: str('proxy-client-cert-file'),
    proxyClientKeyFile: str('proxy-client-key-file'),
    audit: {
      policyFile: str('audit-policy-file'),
      logPath: str('audit-log-path'),
      logMaxAgeDays: int('audit-log-maxage'),
      logMaxBackups: int('audit-log-maxbackup'),
      logMaxSizeMB: int('audit-log-maxsize'),
      webhookConfigFile: str('audit-webhook-config-file'),
      webhookBatchMaxSize: int('audit-webhook-batch-max-size'),
      webhookBatchMaxWaitMs: dur('audit-webhook-batch-max-wait'),
      webhookBufferSize: int('audit-webhook-batch-buffer-size'),
      webhookInitialBackoffMs: dur('audit-webhook-initial-backoff'),
    },
    defaultNotReadyTolerationSeconds: int('default-not-ready-toleration-seconds'),
    defaultUnreachableTolerationSeconds: int('default-unreachable-toleration-seconds'),
    enableBootstrapTokenAuth: bool('enable-bootstrap-token-auth'),
    serveK8sIoGroups: bool('serve-k8s-io-groups'),
    leaderElect: bool('leader-elect'),
    leaderElectLeaseDurationMs: dur('leader-elect-lease-duration'),
    leaderElectRenewDeadlineMs: dur('leader-elect-renew-deadline'),
    leaderElectRetryPeriodMs: dur('leader-elect-retry-period'),
    clusterSigningDurationMs: dur('cluster-signing-duration'),
    logLevel: level,
    authorizationMode: values.has('authorization-mode') ? get('authorization-mode')!.split(',').map((m) => m.trim()).filter(Boolean) : undefined,
    authorizationPolicyFile: str('authorization-policy-file'),
    authorizationWebhookConfigFile: str('authorization-webhook-config-file'),
    authorizationWebhookCacheAuthorizedTtlMs: values.has('authorization-webhook-cache-authorized-ttl') ? dur('authorization-webhook-cache-authorized-ttl') : undefined,
    authorizationWebhookCacheUnauthorizedTtlMs: values.has('authorization-webhook-cache-unauthorized-ttl') ? dur('authorization-webhook-cache-unauthorized-ttl') : undefined,
    authorizationWebhookVersion: str('authorization-webhook-version'),
    authorizationConfig: str('authorization-config'),
    authn: authnFlags(r),
    featureGates: gates.on,
    runtimeConfig: runtimeConfig(list('runtime-config') ?? []),
    featureGateWarnings: gates.warnings,
    help: bool('help'),
    version: bool('version'),
  };
}

/** Authentication (spec 5): service accounts, OIDC, the configuration file, webhook, request headers, anonymous. */
function authnFlags({ values, get, list, strings, str, bool, dur, oneOf }: Readers): ApiServerFlags['authn'] {
  return {
    serviceAccountKeyFiles: strings('service-account-key-file'),
    serviceAccountSigningKeyFile: str('service-account-signing-key-file'),
    serviceAccountIssuers: strings('service-account-issuer').length ? strings('service-account-issuer') : [defs['service-account-issuer'].def!],
    serviceAccountLookup: bool('service-account-lookup'),
    serviceAccountMaxTokenExpirationS: Math.floor(dur('service-account-max-token-expiration') / 1000),
    apiAudiences: list('api-audiences'),
    oidcIssuerUrl: str('oidc-issuer-url'),
    oidcClientId: str('oidc-client-id'),
    oidcUsernameClaim: get('oidc-username-claim')!,
    oidcUsernamePrefix: str('oidc-username-prefix'),
    oidcGroupsClaim: str('oidc-groups-claim'),
    oidcGroupsPrefix: str('oidc-groups-prefix'),
    oidcCaFile: str('oidc-ca-file'),
    oidcRequiredClaims: strings('oidc-required-claim'),
    oidcSigningAlgs: list('oidc-signing-algs') ?? ['RS256'],
    authenticationConfig: str('authentication-config'),
    webhookConfigFile: str('authentication-token-webhook-config-file'),
    webhookCacheTtlMs: dur('authentication-token-webhook-cache-ttl'),
    webhookVersion: oneOf('authentication-token-webhook-version', ['v1', 'v1beta1'] as const),
    requestheaderUsernameHeaders: list('requestheader-username-headers') ?? [],
    requestheaderGroupHeaders: list('requestheader-group-headers') ?? [],
    requestheaderExtraHeadersPrefix: list('requestheader-extra-headers-prefix') ?? [],
    requestheaderUidHeaders: list('requestheader-uid-headers') ?? [],
    requestheaderAllowedNames: list('requestheader-allowed-names') ?? [],
    requestheaderClientCaFile: str('requestheader-client-ca-file'),
    anonymousAuth: values.has('anonymous-auth') ? bool('anonymous-auth') : undefined,
  };
}

/** Text printed by --help; `cols` is the terminal's width to wrap at (none: no wrapping), as pflag's. */
export function helpText(cols?: number): string {
  const rows = Object.entries(defs).map(([name, d]) => {
    const t = d.kind === 'bool' ? '' : ` ${d.kind === 'list' || d.kind === 'strings' ? 'strings' : d.kind}`;
    return { head: `    --${name}${t}`, usage: d.usage + (d.def && d.kind !== 'bool' ? ` (default ${JSON.stringify(d.def)})` : '') };
  });
  const lines = ['Usage: svc-apiserver [flags]', '', 'The compact API server svc-node registers with.', '', 'Flags:', ...formatFlagUsages(rows, cols)];
  return lines.join('\n') + '\n';
}
