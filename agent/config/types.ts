/**
 * The agent's configuration types. NodeAgentConfiguration mirrors the kubelet's
 * KubeletConfiguration (v1beta1) field names; durations are milliseconds in memory.
 */
import type { FeatureGates } from './feature-gates';

export const configKind = 'NodeAgentConfiguration';
export const configAPIVersion = 'nodeagent.config.svc.io/v1beta1';

/** A duration in milliseconds (written as a Go duration string in files). */
export type Millis = number;

export type SwapBehavior = '' | 'NoSwap' | 'LimitedSwap';
export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface Taint {
  key: string;
  value: string;
  effect: TaintEffect;
}

export interface NodeAgentConfiguration {
  /** Serve the agent's HTTPS API. */
  enableServer: boolean;
  /** Directory of static pod manifests; '' disables static pods. */
  staticPodPath: string;
  staticPodURL: string;
  /** Headers for staticPodURL requests; a map of string to list (Appendix D merge rule). */
  staticPodURLHeader: Record<string, string[]>;
  syncFrequency: Millis;
  fileCheckFrequency: Millis;
  httpCheckFrequency: Millis;
  address: string;
  port: number;
  /** 0 disables the read-only port (the v1beta1 default). */
  readOnlyPort: number;
  healthzPort: number;
  healthzBindAddress: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  tlsMinVersion: '' | 'VersionTLS12' | 'VersionTLS13';
  rotateCertificates: boolean;
  serverTLSBootstrap: boolean;
  authentication: {
    x509: { clientCAFile: string };
    webhook: { enabled: boolean; cacheTTL: Millis };
    anonymous: { enabled: boolean };
  };
  authorization: {
    mode: 'AlwaysAllow' | 'Webhook';
    webhook: { cacheAuthorizedTTL: Millis; cacheUnauthorizedTTL: Millis };
  };
  registerNode: boolean;
  registerWithTaints: Taint[];
  providerID: string;
  clusterDomain: string;
  clusterDNS: string[];
  /**
   * svc-node's cluster DNS server (agent/dns/; no kubelet field: upstream runs CoreDNS and NodeLocal
   * DNS as pods). listenAddress '' means the first clusterDNS address; the address must be on the
   * node (e.g. a dummy interface, as NodeLocal DNS's 169.254.20.10). pods: CoreDNS's `pods` option.
   */
  dns: { enabled: boolean; listenAddress: string; port: number; upstreamTimeout: Millis; cacheSize: number; interfaceName: string; pods: 'disabled' | 'insecure' | 'verified' };
  nodeStatusUpdateFrequency: Millis;
  nodeStatusReportFrequency: Millis;
  nodeLeaseDurationSeconds: number;
  imageMinimumGCAge: Millis;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  /**
   * Retention of checkpoint archives in <root-dir>/checkpoints (no upstream equivalent: the kubelet
   * never removes them). schedule is a cron expression ('' disables the policy); maxPerContainer 0
   * and maxAge 0 mean no limit of that kind.
   */
  checkpointRetention: { schedule: string; maxPerContainer: number; maxAge: Millis };
  serializeImagePulls: boolean;
  runtimeRequestTimeout: Millis;
  cgroupDriver: 'cgroupfs' | 'systemd';
  cpuManagerPolicy: 'none' | 'static';
  topologyManagerPolicy: 'none' | 'best-effort' | 'restricted' | 'single-numa-node';
  maxPods: number;
  /** -1 means no limit. */
  podPidsLimit: number;
  resolvConf: string;
  maxOpenFiles: number;
  kubeAPIQPS: number;
  kubeAPIBurst: number;
  /** Event writes per second on their own client (0: no limit), as the kubelet's eventRecordQPS. */
  eventRecordQPS: number;
  eventBurst: number;
  /** Signal -> threshold ("100Mi" or "10%"); parse values with parseThresholdValue. */
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriod: Record<string, Millis>;
  evictionPressureTransitionPeriod: Millis;
  /** Resource name (cpu, memory, ephemeral-storage, pid) -> quantity. */
  systemReserved: Record<string, string>;
  kubeReserved: Record<string, string>;
  enforceNodeAllocatable: string[];
  failSwapOn: boolean;
  memorySwap: { swapBehavior: SwapBehavior };
  /** Size (a quantity) at which a container's live log is rotated; '' turns rotation off. */
  containerLogMaxSize: string;
  /** Log files kept per container, the live one included (at least 2). */
  containerLogMaxFiles: number;
  /** How often the container log manager checks the sizes of running containers' logs. */
  containerLogMonitorInterval: Millis;
  podLogsDir: string;
  /** Where the directories of svc-apiserver's local-path volumes are made on this node (svc addition; absolute). */
  localPathDir: string;
  /** The CNI config directory the container runtime reads; svc-node writes its bridge config there when it holds none (svc addition; absolute). */
  cniConfDir: string;
  /** Routes to the other nodes' podCIDRs through their InternalIPs (svc addition). */
  configurePodCIDRRoutes: boolean;
  shutdownGracePeriod: Millis;
  shutdownGracePeriodCriticalPods: Millis;
  seccompDefault: boolean;
  /** How long a disconnected device plugin's resource stays in the Node's capacity (all unhealthy). */
  devicePluginGracePeriod: Millis;
  /** How long admission waits for a known device plugin that has not (re-)registered yet. */
  devicePluginAdmissionWait: Millis;
  /** An exec, attach or port-forward connection with no traffic either way for this long is closed. */
  streamingConnectionIdleTimeout: Millis;
  /** Streaming connections (exec, attach, port-forward) open at once on the node; more are refused with 429. */
  maxStreamingConnections: number;
  /** Deadline of the device plugin calls made at admission (Allocate, GetPreferredAllocation). */
  devicePluginCallTimeout: Millis;
  featureGates: Record<string, boolean>;
  logging: { format: 'json'; verbosity: number };
  /** The network proxy inside svc-node (svc addition; upstream's kube-proxy). */
  proxy: ProxyConfiguration;
  /** NetworkPolicy enforcement for this node's pods (svc addition). */
  networkPolicy: NetworkPolicyConfiguration;
  containerRuntimeEndpoint: string;
  /** Resolved: equals containerRuntimeEndpoint when not configured. */
  imageServiceEndpoint: string;
}

/** The network proxy's settings (KubeProxyConfiguration's names where it has them). */
export interface ProxyConfiguration {
  /**
   * nftables or iptables programs the rules; '' chooses (nftables on kernel 5.13 or later with a
   * working nft, else iptables); disabled for nodes whose network plugin replaces the proxy.
   */
  mode: '' | 'nftables' | 'iptables' | 'disabled';
  /** Least time between two syncs of the rules (upstream's minSyncPeriod). */
  minSyncPeriod: Millis;
  /** The pod network(s), comma-separated, one per family: traffic to a cluster IP from elsewhere is masqueraded. */
  clusterCIDR: string;
  /** Masquerade all traffic to cluster IPs. */
  masqueradeAll: boolean;
  /** Allow the nftables mode on kernels from 5.4 (upstream's KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK). */
  skipKernelVersionCheck: boolean;
}

/** NetworkPolicy enforcement's settings. */
export interface NetworkPolicyConfiguration {
  /** nftables enforces policies; disabled for nodes whose network plugin enforces them. */
  mode: 'nftables' | 'disabled';
  /** Least time between two syncs of the rules. */
  minSyncPeriod: Millis;
}

/** Process-level settings that only come from flags (as the kubelet's KubeletFlags). */
export interface AgentFlags {
  /** --config, absolute; '' when not given. */
  configFile: string;
  /** --config-dir, absolute; '' when not given. */
  configDir: string;
  kubeconfig: string;
  bootstrapKubeconfig: string;
  rootDir: string;
  certDir: string;
  /** Lower-cased and trimmed, '' when not given. */
  hostnameOverride: string;
  /** --node-ip, at most one per IP family. */
  nodeIPs: string[];
  nodeLabels: Record<string, string>;
  lockFile: string;
}

/** Everything loadAgentConfig resolves: flags + --config + --config-dir drop-ins, defaulted and validated. */
export interface AgentConfig {
  flags: AgentFlags;
  config: NodeAgentConfiguration;
  featureGates: FeatureGates;
  /** The node name: --hostname-override, else the machine's hostname, lower-cased. */
  nodeName: string;
  logLevel: LogLevel;
  /** Configuration files applied, in order (base first, then drop-ins). */
  sources: string[];
  /** Non-fatal notes to log once the logger exists (e.g. GA feature gates set explicitly). */
  warnings: string[];
  /** The file or flag that last set a field path ("default value" when none did), for errors found after loading. */
  fieldSource?: (path: string) => string;
}
