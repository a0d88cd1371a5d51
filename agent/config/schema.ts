/**
 * The nodeagent.config.svc.io/v1beta1 NodeAgentConfiguration schema: field names, types,
 * per-field validation and defaults, following the kubelet's KubeletConfiguration v1beta1
 * (defaults from its SetDefaults_KubeletConfiguration).
 */
import { isIP } from 'node:net';
import { isAbsolute } from 'node:path';
import type { DurationSpec, IntSpec, StructSpec, StringSpec, MapSpec } from './field-spec';
import type { NodeAgentConfiguration } from './types';
import { isEvictionSignal, parseThresholdValue } from './eviction';
import { parseQuantity } from './quantity';
import { checkFeatureGate } from './feature-gates';
import { parseDuration } from '../../apiserver/api/duration';
import { DEFAULT_LOCAL_PATH_DIR } from '../../apiserver/api/local-path';
import { cronProblem } from './cron-expression';
import { parseCidr } from '../../common/cidr';

const str = (def = '', check?: (v: string) => string | undefined): StringSpec => ({ kind: 'string', default: def, check });
const oneOf = <T extends string>(def: T, values: readonly T[]): StringSpec<T> => ({ kind: 'string', default: def, enum: values });
const bool = (def: boolean) => ({ kind: 'bool', default: def }) as const;
const int = (def: number, min?: number, max?: number, check?: (v: number) => string | undefined): IntSpec => ({ kind: 'int', default: def, min, max, check });
const dur = (def: string, min = 0): DurationSpec => ({ kind: 'duration', default: parseDuration(def), min });

export function checkIP(v: string): string | undefined {
  return isIP(v) ? undefined : `invalid value ${JSON.stringify(v)}: must be a valid IP address`;
}
export function checkAbsolutePath(v: string): string | undefined {
  return v === '' || isAbsolute(v) ? undefined : `invalid value ${JSON.stringify(v)}: must be an absolute path`;
}
export function checkEndpoint(v: string): string | undefined {
  // The kubelet still accepts a bare path with a deprecation warning; a new agent need not.
  if (v === '') return undefined;
  // sim://[name] selects the built-in CRI simulator (tests, benchmarks, many simulated nodes).
  if (/^sim:\/\/[A-Za-z0-9._-]*$/.test(v)) return undefined;
  if (!v.startsWith('unix://') || v.length <= 'unix://'.length || !isAbsolute(v.slice('unix://'.length))) {
    return `invalid value ${JSON.stringify(v)}: must be a unix socket URL such as "unix:///run/containerd/containerd.sock" (or sim:// for the built-in simulator)`;
  }
  return undefined;
}
/** A comma-separated list of CIDRs ('' for none), at most one per IP family, as upstream's clusterCIDR. */
export function checkCidrList(v: string): string | undefined {
  if (v === '') return undefined;
  const families = new Set<string>();
  for (const part of v.split(',')) {
    try {
      const c = parseCidr(part);
      if (families.has(c.family)) return `invalid value ${JSON.stringify(v)}: at most one CIDR per IP family`;
      families.add(c.family);
    } catch {
      return `invalid value ${JSON.stringify(v)}: ${JSON.stringify(part.trim())} is not a CIDR`;
    }
  }
  return undefined;
}
function checkQuantity(v: string): string | undefined {
  try {
    if (parseQuantity(v) < 0) return `invalid value ${JSON.stringify(v)}: must be greater than or equal to 0`;
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}
function checkPositiveQuantity(v: string): string | undefined {
  const why = checkQuantity(v);
  if (why) return why;
  return parseQuantity(v) > 0 ? undefined : `invalid value ${JSON.stringify(v)}: must be greater than 0`;
}
const checkOptionalQuantity = (v: string): string | undefined => (v === '' ? undefined : checkPositiveQuantity(v));

function checkThreshold(signal: string, value: string): string | undefined {
  if (!isEvictionSignal(signal)) return `unsupported eviction signal ${JSON.stringify(signal)}`;
  try {
    parseThresholdValue(value);
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

const reservedResources = ['cpu', 'memory', 'ephemeral-storage', 'pid'];
function checkReserved(name: string, value: string): string | undefined {
  if (!reservedResources.includes(name) && !name.startsWith('hugepages-')) {
    return `unsupported resource ${JSON.stringify(name)}: supported resources: ${reservedResources.map((r) => JSON.stringify(r)).join(', ')}, hugepages-<size>`;
  }
  return checkQuantity(value);
}

const thresholdMap = (def: Record<string, string>): MapSpec<string> => ({ kind: 'map', of: str(), default: def, checkEntry: checkThreshold });
const reservedMap: MapSpec<string> = { kind: 'map', of: str(), default: {}, checkEntry: checkReserved };
const ttl = (def: string) => dur(def);

/**
 * Path fields that, as the kubelet does (KubeletConfigurationPathRefs), are resolved relative to
 * the directory of the file that sets them.
 */
export const pathRefFields = ['staticPodPath', 'tlsCertFile', 'tlsPrivateKeyFile', 'authentication.x509.clientCAFile', 'resolvConf'] as const;

export const enforceNodeAllocatableValues = ['pods', 'system-reserved', 'kube-reserved', 'none'] as const;

export const nodeAgentConfigSchema: StructSpec<NodeAgentConfiguration> = {
  kind: 'struct',
  fields: {
    enableServer: bool(true),
    staticPodPath: str(''),
    staticPodURL: str(''),
    staticPodURLHeader: { kind: 'map', of: { kind: 'list', of: str(), default: [] }, default: {} },
    syncFrequency: dur('1m', 1),
    fileCheckFrequency: dur('20s', 1),
    httpCheckFrequency: dur('20s', 1),
    address: str('0.0.0.0', checkIP),
    port: int(10250, 1, 65535),
    readOnlyPort: int(0, 0, 65535),
    healthzPort: int(10248, 0, 65535),
    healthzBindAddress: str('127.0.0.1', checkIP),
    tlsCertFile: str(''),
    tlsPrivateKeyFile: str(''),
    tlsMinVersion: oneOf('', ['', 'VersionTLS12', 'VersionTLS13']),
    // Upstream's v1beta1 default is false; kubeadm turns it on and so do we, because an agent whose
    // client certificate silently expires drops out of the cluster.
    rotateCertificates: bool(true),
    serverTLSBootstrap: bool(false),
    authentication: {
      kind: 'struct',
      fields: {
        x509: { kind: 'struct', fields: { clientCAFile: str('') } },
        webhook: { kind: 'struct', fields: { enabled: bool(true), cacheTTL: ttl('2m') } },
        anonymous: { kind: 'struct', fields: { enabled: bool(false) } },
      },
    },
    authorization: {
      kind: 'struct',
      fields: {
        mode: oneOf('Webhook', ['AlwaysAllow', 'Webhook']),
        webhook: { kind: 'struct', fields: { cacheAuthorizedTTL: ttl('5m'), cacheUnauthorizedTTL: ttl('30s') } },
      },
    },
    registerNode: bool(true),
    registerWithTaints: {
      kind: 'list',
      default: [],
      of: {
        kind: 'struct',
        fields: {
          key: { kind: 'string', default: '', required: true, check: (v) => (v === '' ? 'required value' : undefined) },
          value: str(''),
          effect: oneOf('NoSchedule', ['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
        },
      },
    },
    providerID: str(''),
    clusterDomain: str(''),
    clusterDNS: { kind: 'list', of: str('', checkIP), default: [] },
    // svc addition: the node-local cluster DNS server (NodeLocal DNS's cache sizes and 2 s forward timeout).
    dns: {
      kind: 'struct',
      fields: {
        enabled: bool(false),
        listenAddress: str('', (v) => (v === '' ? undefined : checkIP(v))),
        port: int(53, 1, 65535),
        upstreamTimeout: dur('2s', 1),
        cacheSize: int(9984, 0),
        // '' leaves the address to the node; a name makes that dummy interface for it (NodeLocal DNS's nodelocaldns).
        interfaceName: str('', (v) => (v === '' || /^[A-Za-z0-9_.-]{1,15}$/.test(v) ? undefined : `invalid value ${JSON.stringify(v)}: must be a network interface name of 1 to 15 letters, digits, '-', '_' or '.'`)),
        // CoreDNS's `pods` option; "insecure" as kubeadm's and k3s's Corefile (the plugin's own default is "disabled").
        pods: oneOf('insecure', ['disabled', 'insecure', 'verified']),
      },
    },
    nodeStatusUpdateFrequency: dur('10s', 1),
    nodeStatusReportFrequency: dur('5m', 1),
    nodeLeaseDurationSeconds: int(40, 1),
    imageMinimumGCAge: dur('2m'),
    imageGCHighThresholdPercent: int(85, 0, 100),
    imageGCLowThresholdPercent: int(80, 0, 100),
    checkpointRetention: {
      kind: 'struct',
      fields: {
        schedule: str('*/10 * * * *', (v) => (v === '' ? undefined : cronProblem(v))),
        // Ten archives per container by default: a forensic tool rarely needs more, and an
        // unbounded directory of memory dumps is how upstream's users filled their disks.
        maxPerContainer: int(10, 0),
        maxAge: dur('0s'),
      },
    },
    serializeImagePulls: bool(true),
    runtimeRequestTimeout: dur('2m', 1),
    cgroupDriver: oneOf('cgroupfs', ['cgroupfs', 'systemd']),
    cpuManagerPolicy: oneOf('none', ['none', 'static']),
    topologyManagerPolicy: oneOf('none', ['none', 'best-effort', 'restricted', 'single-numa-node']),
    maxPods: int(110, 0),
    podPidsLimit: int(-1, -1, undefined, (v) => (v === 0 ? 'invalid value 0: must be -1 (no limit) or a positive number' : undefined)),
    resolvConf: str('/etc/resolv.conf'),
    maxOpenFiles: int(1000000, 0),
    kubeAPIQPS: int(50, 0),
    kubeAPIBurst: int(100, 0),
    eventRecordQPS: int(50, 0),
    eventBurst: int(100, 0),
    // As upstream: setting evictionHard in the base file replaces this whole map (signals left out
    // are not monitored); drop-ins then merge into it key by key.
    evictionHard: thresholdMap({ 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' }),
    evictionSoft: thresholdMap({}),
    evictionSoftGracePeriod: {
      kind: 'map',
      of: dur('0s'),
      default: {},
      checkEntry: (k) => (isEvictionSignal(k) ? undefined : `unsupported eviction signal ${JSON.stringify(k)}`),
    },
    evictionPressureTransitionPeriod: dur('5m'),
    systemReserved: reservedMap,
    kubeReserved: reservedMap,
    enforceNodeAllocatable: { kind: 'list', of: oneOf('pods', enforceNodeAllocatableValues), default: ['pods'] },
    failSwapOn: bool(true),
    // '' (unset) behaves as NoSwap; setting it explicitly is what allows running with swap on.
    memorySwap: { kind: 'struct', fields: { swapBehavior: oneOf('', ['', 'NoSwap', 'LimitedSwap']) } },
    containerLogMaxSize: str('10Mi', checkOptionalQuantity),
    containerLogMaxFiles: int(5, 2),
    // Upstream's validation refuses intervals below 3s.
    containerLogMonitorInterval: dur('10s', 3000),
    podLogsDir: str('/var/log/pods', checkAbsolutePath),
    // svc addition: the base directory of local-path volumes (apiserver/api/local-path.ts's default).
    localPathDir: str(DEFAULT_LOCAL_PATH_DIR, checkAbsolutePath),
    // svc additions (issue 24, pod networking): the CNI config directory the runtime reads (the
    // default of the kubelet's former --cni-conf-dir and of containerd's CRI conf_dir), and the
    // switch for host-gateway routes to the other nodes' podCIDRs.
    cniConfDir: str('/etc/cni/net.d', checkAbsolutePath),
    configurePodCIDRRoutes: bool(true),
    shutdownGracePeriod: dur('0s'),
    shutdownGracePeriodCriticalPods: dur('0s'),
    seccompDefault: bool(false),
    // svc additions (no upstream field): how long a device plugin's resource outlives the plugin
    // (upstream's fixed 5 minutes), how long a pod waits for a known plugin to register again
    // before admission fails, and the deadline of Allocate / GetPreferredAllocation.
    devicePluginGracePeriod: dur('5m'),
    devicePluginAdmissionWait: dur('1m'),
    devicePluginCallTimeout: dur('30s', 1),
    // exec, attach and port-forward: upstream's idle timeout (4h), and svc's cap on the node's
    // open streams (upstream has none; a client that opens streams without end would hold a
    // runtime connection each).
    streamingConnectionIdleTimeout: dur('4h', 1),
    maxStreamingConnections: int(100, 1),
    featureGates: { kind: 'map', of: bool(false), default: {}, checkEntry: (k, v) => checkFeatureGate(k, v) },
    logging: {
      kind: 'struct',
      fields: {
        // Logs are always structured JSON (pino); the kubelet's "text" format is not offered.
        format: oneOf('json', ['json']),
        verbosity: int(0, 0),
      },
    },
    // svc addition: the network proxy inside svc-node (upstream's kube-proxy, KubeProxyConfiguration's names).
    proxy: {
      kind: 'struct',
      fields: {
        // '' (upstream's default too) chooses: nftables where the kernel and nft can, else iptables.
        mode: oneOf('', ['', 'nftables', 'iptables', 'disabled']),
        minSyncPeriod: dur('1s'),
        clusterCIDR: str('', checkCidrList),
        masqueradeAll: bool(false),
        skipKernelVersionCheck: bool(false),
      },
    },
    // svc addition: NetworkPolicy enforcement for this node's pods (nftables; agent/netpol/).
    networkPolicy: {
      kind: 'struct',
      fields: {
        mode: oneOf('nftables', ['nftables', 'disabled']),
        minSyncPeriod: dur('1s'),
      },
    },
    containerRuntimeEndpoint: str('unix:///run/containerd/containerd.sock', checkEndpoint),
    imageServiceEndpoint: str('', checkEndpoint),
  },
};
