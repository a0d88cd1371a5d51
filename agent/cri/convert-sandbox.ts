/** Wire conversions for pod sandboxes (see convert-common for the conventions). */
import {
  compact,
  enumOf,
  withIds,
  int64ValueToWire,
  map,
  msToNs,
  namespaceOptionFromWire,
  namespaceOptionToWire,
  nsToMs,
  num,
  opt,
  resourcesFromWire,
  resourcesToWire,
  securityProfileFromWire,
  securityProfileToWire,
  seLinuxFromWire,
  seLinuxToWire,
  str,
  strs,
} from './convert-common';
import { containerStatusFromWire, containerStatusToWire } from './convert-container-status';
import type {
  LinuxSandboxSecurityContext,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxMetadata,
  PodSandboxState,
  PodSandboxStatus,
  PodSandboxStatusResult,
  Protocol,
  SupplementalGroupsPolicy,
} from './types';
import type {
  Opt,
  WLinuxSandboxSecurityContext,
  WPodSandbox,
  WPodSandboxConfig,
  WPodSandboxFilter,
  WPodSandboxMetadata,
  WPodSandboxStatus,
  WPodSandboxStatusResponse,
} from './wire-types';

export const SANDBOX_STATES: readonly PodSandboxState[] = ['SANDBOX_READY', 'SANDBOX_NOTREADY'];
const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
export const GROUP_POLICIES: readonly SupplementalGroupsPolicy[] = ['Merge', 'Strict'];

export function sandboxMetadataToWire(m: PodSandboxMetadata): WPodSandboxMetadata {
  return { name: m.name, uid: m.uid, namespace: m.namespace, attempt: m.attempt };
}

export function sandboxMetadataFromWire(w: Opt<WPodSandboxMetadata>): PodSandboxMetadata {
  return { name: str(w?.name), uid: str(w?.uid), namespace: str(w?.namespace), attempt: w?.attempt ?? 0 };
}

function sandboxSecurityToWire(s: LinuxSandboxSecurityContext): WLinuxSandboxSecurityContext {
  return {
    namespace_options: s.namespaceOptions ? namespaceOptionToWire(s.namespaceOptions) : undefined,
    selinux_options: s.selinuxOptions ? seLinuxToWire(s.selinuxOptions) : undefined,
    run_as_user: int64ValueToWire(s.runAsUser),
    run_as_group: int64ValueToWire(s.runAsGroup),
    readonly_rootfs: s.readonlyRootfs,
    supplemental_groups: s.supplementalGroups,
    supplemental_groups_policy: s.supplementalGroupsPolicy,
    privileged: s.privileged,
    seccomp: s.seccomp ? securityProfileToWire(s.seccomp) : undefined,
    apparmor: s.apparmor ? securityProfileToWire(s.apparmor) : undefined,
  };
}

function sandboxSecurityFromWire(w: WLinuxSandboxSecurityContext): LinuxSandboxSecurityContext {
  const policy = enumOf(w.supplemental_groups_policy, GROUP_POLICIES, 'Merge');
  return withIds<LinuxSandboxSecurityContext>(w, {
    namespaceOptions: opt(w.namespace_options, namespaceOptionFromWire),
    selinuxOptions: opt(w.selinux_options, seLinuxFromWire),
    readonlyRootfs: w.readonly_rootfs,
    supplementalGroups: (w.supplemental_groups ?? []).map(num),
    supplementalGroupsPolicy: policy === 'Merge' ? undefined : policy,
    privileged: w.privileged,
    seccomp: opt(w.seccomp, securityProfileFromWire),
    apparmor: opt(w.apparmor, securityProfileFromWire),
  });
}

export function sandboxConfigToWire(c: PodSandboxConfig): WPodSandboxConfig {
  const l = c.linux;
  return {
    metadata: sandboxMetadataToWire(c.metadata),
    hostname: c.hostname,
    log_directory: c.logDirectory,
    dns_config: c.dnsConfig
      ? { servers: c.dnsConfig.servers, searches: c.dnsConfig.searches, options: c.dnsConfig.options }
      : undefined,
    port_mappings: c.portMappings?.map((p) => ({
      protocol: p.protocol,
      container_port: p.containerPort,
      host_port: p.hostPort,
      host_ip: p.hostIp,
    })),
    labels: c.labels,
    annotations: c.annotations,
    linux: l
      ? {
          cgroup_parent: l.cgroupParent,
          security_context: l.securityContext ? sandboxSecurityToWire(l.securityContext) : undefined,
          sysctls: l.sysctls,
          overhead: l.overhead ? resourcesToWire(l.overhead) : undefined,
          resources: l.resources ? resourcesToWire(l.resources) : undefined,
        }
      : undefined,
  };
}

export function sandboxConfigFromWire(w: Opt<WPodSandboxConfig>): PodSandboxConfig {
  if (!w) return { metadata: sandboxMetadataFromWire(undefined) };
  return {
    metadata: sandboxMetadataFromWire(w.metadata),
    ...compact({
      hostname: str(w.hostname),
      logDirectory: str(w.log_directory),
      dnsConfig: opt(w.dns_config, (d) =>
        compact({ servers: strs(d.servers), searches: strs(d.searches), options: strs(d.options) }),
      ),
      portMappings: (w.port_mappings ?? []).map((p) => {
        const protocol = enumOf(p.protocol, PROTOCOLS, 'TCP');
        return {
          containerPort: p.container_port ?? 0,
          ...compact({ protocol: protocol === 'TCP' ? undefined : protocol, hostPort: p.host_port, hostIp: str(p.host_ip) }),
        };
      }),
      labels: map(w.labels),
      annotations: map(w.annotations),
      linux: opt(w.linux, (l) =>
        compact({
          cgroupParent: str(l.cgroup_parent),
          securityContext: opt(l.security_context, sandboxSecurityFromWire),
          sysctls: map(l.sysctls),
          overhead: opt(l.overhead, resourcesFromWire),
          resources: opt(l.resources, resourcesFromWire),
        }),
      ),
    }),
  };
}

export function sandboxToWire(s: PodSandbox): WPodSandbox {
  return {
    id: s.id,
    metadata: sandboxMetadataToWire(s.metadata),
    state: s.state,
    created_at: msToNs(s.createdAt),
    labels: s.labels,
    annotations: s.annotations,
    runtime_handler: s.runtimeHandler,
  };
}

export function sandboxFromWire(w: WPodSandbox): PodSandbox {
  return {
    id: str(w.id),
    metadata: sandboxMetadataFromWire(w.metadata),
    state: enumOf(w.state, SANDBOX_STATES, 'SANDBOX_NOTREADY'),
    createdAt: nsToMs(w.created_at),
    labels: map(w.labels),
    annotations: map(w.annotations),
    runtimeHandler: str(w.runtime_handler),
  };
}

export function sandboxStatusToWire(s: PodSandboxStatus): WPodSandboxStatus {
  return {
    id: s.id,
    metadata: sandboxMetadataToWire(s.metadata),
    state: s.state,
    created_at: msToNs(s.createdAt),
    network: { ip: s.ip, additional_ips: s.additionalIps.map((ip) => ({ ip })) },
    linux: s.namespaceOptions ? { namespaces: { options: namespaceOptionToWire(s.namespaceOptions) } } : undefined,
    labels: s.labels,
    annotations: s.annotations,
    runtime_handler: s.runtimeHandler,
  };
}

export function sandboxStatusFromWire(w: Opt<WPodSandboxStatus>): PodSandboxStatus {
  const ns = w?.linux?.namespaces?.options;
  const status: PodSandboxStatus = {
    id: str(w?.id),
    metadata: sandboxMetadataFromWire(w?.metadata),
    state: enumOf(w?.state, SANDBOX_STATES, 'SANDBOX_NOTREADY'),
    createdAt: nsToMs(w?.created_at),
    ip: str(w?.network?.ip),
    additionalIps: (w?.network?.additional_ips ?? []).map((p) => str(p.ip)),
    labels: map(w?.labels),
    annotations: map(w?.annotations),
    runtimeHandler: str(w?.runtime_handler),
  };
  if (ns) status.namespaceOptions = namespaceOptionFromWire(ns);
  return status;
}

export function sandboxStatusResultToWire(r: PodSandboxStatusResult): WPodSandboxStatusResponse {
  return {
    status: sandboxStatusToWire(r.status),
    info: r.info,
    containers_statuses: r.containersStatuses.map(containerStatusToWire),
    timestamp: msToNs(r.timestamp),
  };
}

export function sandboxStatusResultFromWire(w: WPodSandboxStatusResponse): PodSandboxStatusResult {
  return {
    status: sandboxStatusFromWire(w.status),
    info: map(w.info),
    containersStatuses: (w.containers_statuses ?? []).map(containerStatusFromWire),
    timestamp: nsToMs(w.timestamp),
  };
}

export function sandboxFilterToWire(f: PodSandboxFilter): WPodSandboxFilter {
  return { id: f.id, state: f.state ? { state: f.state } : undefined, label_selector: f.labelSelector };
}

export function sandboxFilterFromWire(w: Opt<WPodSandboxFilter>): PodSandboxFilter {
  if (!w) return {};
  return compact({
    id: str(w.id),
    state: opt(w.state, (s) => enumOf(s.state, SANDBOX_STATES, 'SANDBOX_READY')),
    labelSelector: map(w.label_selector),
  });
}
