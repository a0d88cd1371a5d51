/**
 * A pod as a CRI PodSandboxConfig, as upstream's kuberuntime generatePodSandboxConfig: metadata
 * (name, namespace, uid, attempt), hostname (none for host-network pods: containerd puts them in
 * the host's UTS namespace and runc refuses to set a hostname there), the log directory
 * <podLogsDir>/<namespace>_<name>_<uid>, DNS, port mappings, labels, the pod's cgroup parent and
 * the sandbox's security context (namespaces, privileged if any container is, seccomp, sysctls).
 */
import path from 'node:path';
import type { PodSandboxConfig, PortMapping, SecurityProfile } from '../cri';
import type { Pod } from '../api/core-v1';
import { sandboxAnnotations, sandboxLabels } from './runtime-labels';
import { podDnsConfig, type PodDnsWarning } from '../dns/pod-dns';
import type { ResolverConfig } from '../dns/resolv-conf';

export interface SandboxConfigInput {
  pod: Pod;
  attempt: number;
  /** podLogsDir of the agent configuration. */
  podLogsDir: string;
  cgroupParent: string;
  seccomp: SecurityProfile;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The node's resolver configuration (agent/dns/resolv-conf.ts); unset: the runtime copies the node's resolv.conf for host-DNS pods. */
  hostDns?: ResolverConfig;
  /** Receives the pod's DNS warnings (MissingClusterDNS, DNSConfigForming) to record as events. */
  onDnsWarning?: (w: PodDnsWarning) => void;
}

/** The pod UID in a pod log directory's name (<namespace>_<name>_<uid>), or undefined for other names. */
export function podUidOfLogDirectory(dirName: string): string | undefined {
  // Namespaces and pod names are DNS labels/subdomains (no '_'), so the UID is what follows the second '_'.
  const parts = dirName.split('_');
  return parts.length === 3 && parts[0] !== '' && parts[1] !== '' && parts[2] !== '' ? parts[2] : undefined;
}

/** <podLogsDir>/<namespace>_<name>_<uid>, upstream's BuildPodLogsDirectory. */
export function podLogDirectory(podLogsDir: string, pod: Pod): string {
  return path.join(podLogsDir, `${pod.metadata.namespace ?? 'default'}_${pod.metadata.name ?? ''}_${pod.metadata.uid ?? ''}`);
}

/** The pod's hostname: spec.hostname, else the pod name, cut to 63 characters without a trailing '-' or '.' (upstream GeneratePodHostNameAndDomain). */
export function podHostname(pod: Pod): string {
  const name = pod.spec.hostname || pod.metadata.name || '';
  if (name.length <= 63) return name;
  return name.slice(0, 63).replace(/[-.]+$/, '');
}

function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      const m: PortMapping = { containerPort: p.containerPort, protocol: p.protocol ?? 'TCP' };
      if (p.hostPort) m.hostPort = p.hostPort;
      if (p.hostIP) m.hostIp = p.hostIP;
      out.push(m);
    }
  }
  return out;
}

export function buildSandboxConfig(input: SandboxConfigInput): PodSandboxConfig {
  const { pod } = input;
  const s = pod.spec;
  const psc = s.securityContext ?? {};
  const privileged = [...s.containers, ...(s.initContainers ?? [])].some((c) => c.securityContext?.privileged === true);
  const config: PodSandboxConfig = {
    metadata: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? 'default', uid: pod.metadata.uid ?? '', attempt: input.attempt },
    logDirectory: podLogDirectory(input.podLogsDir, pod),
    portMappings: portMappings(pod),
    labels: sandboxLabels(pod),
    annotations: sandboxAnnotations(pod),
    linux: {
      cgroupParent: input.cgroupParent,
      securityContext: {
        namespaceOptions: {
          network: s.hostNetwork ? 'NODE' : 'POD',
          pid: s.hostPID ? 'NODE' : s.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: s.hostIPC ? 'NODE' : 'POD',
        },
        privileged,
        seccomp: input.seccomp,
      },
    },
  };
  if (!s.hostNetwork) config.hostname = podHostname(pod);
  // DNS per dnsPolicy, as the kubelet's dns.Configurer (agent/dns/pod-dns.ts).
  const dns = podDnsConfig({ pod, clusterDNS: input.clusterDNS, clusterDomain: input.clusterDomain, host: input.hostDns });
  if (dns.config) config.dnsConfig = dns.config;
  for (const w of dns.warnings) input.onDnsWarning?.(w);
  if (psc.runAsUser !== undefined) config.linux!.securityContext!.runAsUser = psc.runAsUser;
  if (psc.runAsGroup !== undefined) config.linux!.securityContext!.runAsGroup = psc.runAsGroup;
  if (psc.supplementalGroups?.length) config.linux!.securityContext!.supplementalGroups = [...psc.supplementalGroups];
  if (psc.sysctls?.length) config.linux!.sysctls = Object.fromEntries(psc.sysctls.map((x) => [x.name, x.value]));
  return config;
}
