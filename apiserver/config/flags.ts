import { formatFlagUsages } from '../../common/flag-usage';
import { parseDuration } from '../api/duration';
import { selectAdmissionPlugins } from './admission-plugins';
import { parseFeatureGatePairs } from './feature-gates';
import { apiServerFlagDefs as defs } from './flag-defs';
import { parseRuntimeConfig, type RuntimeConfig } from './runtime-config';
import { parseNetworkFlags, type NetworkFlags } from './network-flags';

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
  /** --metric-resolution: how often the bundled metrics server scrapes the node agents (metrics-server's flag, 15s). */
  metricResolutionMs: number;
  /** --horizontal-pod-autoscaler-sync-period: how often each HPA is reconciled (kube-controller-manager's flag, 15s). */
  hpaSyncPeriodMs: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization: the default scale-down stabilization window (kube-controller-manager's flag, 5m). */
  hpaDownscaleStabilizationMs: number;
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
  /** --local-path-provisioner: the built-in local-path StorageClass and provisioner (issue 20). */
  localPathProvisioner: boolean;
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
  /** --show-hidden-metrics-for-version as given ('' when not): checked by main against the metrics' release (metrics/stability.ts). */
  showHiddenMetricsForVersion: string;
  /** Service CIDRs and node ports (config/network-flags.ts). */
  network: NetworkFlags;
  help: boolean;
  version: boolean;
}

export { CBOR_GATE } from './feature-gates';
export { apiServerFlagDefs, type Def, type Kind } from './flag-defs';

export class FlagError extends Error {}

/** The gates switched on (config/feature-gates.ts); a malformed, unknown or locked gate is a FlagError as upstream words it. */
function featureGates(pairs: readonly string[]): { on: Set<string>; warnings: string[] } {
  const gates = parseFeatureGatePairs(pairs);
  if ('error' in gates) throw new FlagError(gates.error);
  return gates;
}

function runtimeConfig(pairs: readonly string[]): RuntimeConfig {
  const cfg = parseRuntimeConfig(pairs);
  if ('error' in cfg) throw new FlagError(`invalid argument "${pairs.join(',')}" for --runtime-config: ${cfg.error}`);
  return cfg;
}

function networkFlags(get: (n: string) => string | undefined): NetworkFlags {
  try {
    return parseNetworkFlags(get);
  } catch (err) {
    throw new FlagError((err as Error).message, { cause: err });
  }
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
  if (dur('metric-resolution') <= 0) throw new FlagError('--metric-resolution must be positive');
  if (dur('horizontal-pod-autoscaler-sync-period') <= 0) throw new FlagError('--horizontal-pod-autoscaler-sync-period must be positive');
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
    metricResolutionMs: dur('metric-resolution'),
    hpaSyncPeriodMs: dur('horizontal-pod-autoscaler-sync-period'),
    hpaDownscaleStabilizationMs: dur('horizontal-pod-autoscaler-downscale-stabilization'),
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
    localPathProvisioner: bool('local-path-provisioner'),
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
    showHiddenMetricsForVersion: str('show-hidden-metrics-for-version') ?? '',
    network: networkFlags(get),
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
