/**
 * A pod's container as a CRI ContainerConfig, as upstream's kuberuntime generateContainerConfig:
 * command and args with $(VAR) expansion, the environment, mounts for the pod's volumes and the
 * termination-message file, resources, the security context (capabilities, user, read-only
 * root, no_new_privs, masked and read-only /proc paths, namespaces, seccomp) and the log path
 * <container>/<restartCount>.log under the sandbox's log directory.
 */
import path from 'node:path';
import type { ContainerAllocation } from '../devices/container-allocation';
import type { ContainerConfig, KeyValue, LinuxContainerSecurityContext, Mount, NamespaceOption, SecurityProfile } from '../cri';
import { expand } from './env';
import type { Container, Pod } from '../api/core-v1';
import { linuxResources } from './resources';
import { containerAnnotations, containerLabels } from './runtime-labels';
import { configError } from './sync-errors';

/** Upstream securitycontext defaults for containers that are not privileged. */
export const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  kind: 'container' | 'init' | 'ephemeral';
  /** The attempt (restart count) this container will be. */
  attempt: number;
  env: KeyValue[];
  /** Volume name -> host path (from VolumeManager.setUp). */
  volumes: Map<string, string>;
  seccomp: SecurityProfile;
  /** Host file mounted at the termination message path; none when undefined. */
  terminationLogPath?: string;
  memoryCapacity: number;
}

/** Namespace modes of a container: the pod's network, its own PID namespace unless the pod shares one (as upstream). */
export function containerNamespaces(pod: Pod): NamespaceOption {
  const s = pod.spec;
  return {
    network: s.hostNetwork ? 'NODE' : 'POD',
    pid: s.hostPID ? 'NODE' : s.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: s.hostIPC ? 'NODE' : 'POD',
  };
}

/**
 * Volumes every mount of which is read-only whatever the mount says, as upstream's mounters
 * report: API data volumes (configMap, secret, downwardAPI, projected: the agent owns their
 * contents) and claims with readOnly set.
 */
function volumeReadOnly(pod: Pod, name: string): boolean {
  const v = (pod.spec.volumes ?? []).find((x) => x.name === name);
  if (!v) return false;
  if (v.configMap || v.secret || v['downwardAPI'] || v['projected']) return true;
  const claim = v['persistentVolumeClaim'] as { readOnly?: boolean } | undefined;
  return claim?.readOnly === true;
}

function mounts(input: ContainerConfigInput): Mount[] {
  const out: Mount[] = [];
  for (const vm of input.container.volumeMounts ?? []) {
    const host = input.volumes.get(vm.name);
    if (host === undefined) throw configError(`cannot find volume "${vm.name}" to mount into container "${input.container.name}"`);
    let hostPath = host;
    if (vm.subPath) {
      const sub = path.normalize(vm.subPath);
      if (path.isAbsolute(sub) || sub.startsWith('..')) throw configError(`subPath ${JSON.stringify(vm.subPath)} must be a relative path that stays inside the volume`);
      hostPath = path.join(host, sub);
    }
    const m: Mount = { containerPath: vm.mountPath, hostPath, readonly: vm.readOnly === true || volumeReadOnly(input.pod, vm.name) };
    if (vm.mountPropagation === 'HostToContainer') m.propagation = 'PROPAGATION_HOST_TO_CONTAINER';
    else if (vm.mountPropagation === 'Bidirectional') m.propagation = 'PROPAGATION_BIDIRECTIONAL';
    out.push(m);
  }
  const tmp = input.container.terminationMessagePath ?? '/dev/termination-log';
  if (input.terminationLogPath && !out.some((m) => m.containerPath === tmp)) out.push({ containerPath: tmp, hostPath: input.terminationLogPath, readonly: false });
  return out;
}

function securityContext(input: ContainerConfigInput): LinuxContainerSecurityContext {
  const { pod, container } = input;
  const sc = container.securityContext ?? {};
  const psc = pod.spec.securityContext ?? {};
  const privileged = sc.privileged === true;
  const out: LinuxContainerSecurityContext = {
    privileged,
    namespaceOptions: containerNamespaces(pod),
    seccomp: input.seccomp,
  };
  const runAsUser = sc.runAsUser ?? psc.runAsUser;
  const runAsGroup = sc.runAsGroup ?? psc.runAsGroup;
  if (runAsUser !== undefined) out.runAsUser = runAsUser;
  if (runAsGroup !== undefined) out.runAsGroup = runAsGroup;
  if (psc.supplementalGroups?.length || psc.fsGroup !== undefined) {
    out.supplementalGroups = [...(psc.supplementalGroups ?? []), ...(psc.fsGroup !== undefined ? [psc.fsGroup] : [])];
  }
  if (sc.readOnlyRootFilesystem) out.readonlyRootfs = true;
  if (sc.capabilities) {
    out.capabilities = {
      addCapabilities: (sc.capabilities.add ?? []).map((c) => (c === 'ALL' || c.startsWith('CAP_') ? c : `CAP_${c}`)),
      dropCapabilities: (sc.capabilities.drop ?? []).map((c) => (c === 'ALL' || c.startsWith('CAP_') ? c : `CAP_${c}`)),
    };
  }
  // Upstream AddNoNewPrivileges: only when allowPrivilegeEscalation is explicitly false.
  if (sc.allowPrivilegeEscalation === false && !privileged) out.noNewPrivs = true;
  if (!privileged) {
    out.maskedPaths = [...DEFAULT_MASKED_PATHS];
    out.readonlyPaths = [...DEFAULT_READONLY_PATHS];
  }
  return out;
}

/** The CRI config for one attempt of the container. Throws ContainerSyncError (CreateContainerConfigError) for bad mounts. */
export function buildContainerConfig(input: ContainerConfigInput): ContainerConfig {
  const { pod, container, attempt, env } = input;
  if (!container.image) throw configError(`container "${container.name}" has no image`);
  const envMap = new Map(env.map((e) => [e.key, e.value]));
  const lookup = (n: string) => envMap.get(n);
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt },
    image: { image: container.image, userSpecifiedImage: container.image },
    envs: env,
    mounts: mounts(input),
    labels: containerLabels(pod, container),
    annotations: containerAnnotations(pod, container, input.kind, attempt),
    logPath: path.join(container.name, `${attempt}.log`),
    linux: {
      resources: linuxResources(pod, container, input.memoryCapacity),
      securityContext: securityContext(input),
    },
  };
  if (container.command) config.command = container.command.map((c) => expand(c, lookup));
  if (container.args) config.args = container.args.map((a) => expand(a, lookup));
  if (container.workingDir) config.workingDir = container.workingDir;
  if (container.stdin) config.stdin = true;
  if (container.stdinOnce) config.stdinOnce = true;
  if (container.tty) config.tty = true;
  return config;
}

/**
 * Adds what device plugins' Allocate answered for the container (upstream: the device manager's
 * RunContainerOptions): environment variables after the container's own (a device variable
 * replaces a same-named one, as the runtime would see the later entry), mounts whose container
 * path is not mounted already, device nodes, annotations and CDI devices.
 */
export function applyDeviceAllocation(config: ContainerConfig, a: ContainerAllocation): void {
  const envs = (config.envs ?? []).filter((e) => !(e.key in a.envs));
  for (const [key, value] of Object.entries(a.envs).sort(([x], [y]) => x.localeCompare(y))) envs.push({ key, value });
  config.envs = envs;
  const mounted = new Set((config.mounts ?? []).map((m) => m.containerPath));
  config.mounts = [...(config.mounts ?? []), ...a.mounts.filter((m) => !mounted.has(m.containerPath)).map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly }))];
  if (a.devices.length > 0) config.devices = [...(config.devices ?? []), ...a.devices.map((d) => ({ containerPath: d.containerPath, hostPath: d.hostPath, permissions: d.permissions }))];
  if (Object.keys(a.annotations).length > 0) config.annotations = { ...(config.annotations ?? {}), ...a.annotations };
  if (a.cdiDevices.length > 0) config.cdiDevices = [...(config.cdiDevices ?? []), ...a.cdiDevices];
}
