/**
 * svc-apiserver's flag table: every flag's kind, usage text and default (upstream's names), read
 * by the parser (config/flags.ts), --help and the generated reference
 * (docs/reference/apiserver-flags.md).
 */
import { ADMISSION_PLUGINS } from './admission-plugins';
import { apiServerGates } from './feature-gates';
import { NETWORK_FLAG_DEFS } from './network-flags';

/** list: comma-separated; strings: repeatable, each occurrence one value (paths may hold commas). */
export type Kind = 'string' | 'int' | 'bool' | 'duration' | 'list' | 'strings';

export interface Def {
  kind: Kind;
  usage: string;
  def?: string;
}

const defs: Record<string, Def> = {
  ...NETWORK_FLAG_DEFS,
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
  'metric-resolution': { kind: 'duration', usage: 'How often the bundled metrics server reads every Ready node agent\'s /stats/summary for the resource metrics API (metrics.k8s.io, kubectl top, the HPA), as metrics-server\'s flag', def: '15s' },
  'horizontal-pod-autoscaler-sync-period': { kind: 'duration', usage: 'How often each HorizontalPodAutoscaler is reconciled, as kube-controller-manager\'s flag', def: '15s' },
  'horizontal-pod-autoscaler-downscale-stabilization': { kind: 'duration', usage: 'The scale-down stabilization window of HorizontalPodAutoscalers whose behavior sets none, as kube-controller-manager\'s flag', def: '5m' },
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
  'local-path-provisioner': {
    kind: 'bool',
    usage: 'Create the default StorageClass local-path at start and provision its claims as hostPath volumes on the node their pod is scheduled to (svc-node makes and removes the directories); false: neither',
    def: 'true',
  },
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
  'show-hidden-metrics-for-version': { kind: 'string', usage: 'The previous minor Kubernetes release (1.32) to export again the metrics hidden in this one (deprecated metrics past their lifetime)' },
  help: { kind: 'bool', usage: 'Print this help and exit', def: 'false' },
  version: { kind: 'bool', usage: 'Print the version and exit', def: 'false' },
};

/** The flag table as defined here, read by the generated reference (docs/reference/apiserver-flags.md). */
export const apiServerFlagDefs: Readonly<Record<string, Readonly<Def>>> = defs;
