/** Wire conversions for container configs, listings and exec (see convert-common for conventions). */
import {
  compact,
  enumOf,
  imageSpecFromWire,
  imageSpecToWire,
  withIds,
  int64ValueToWire,
  map,
  mountFromWire,
  mountToWire,
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
import {
  CONTAINER_STATES,
  containerMetadataFromWire,
  containerMetadataToWire,
  containerStatusFromWire,
  containerStatusToWire,
  stopSignalFromWire,
} from './convert-container-status';
import { GROUP_POLICIES } from './convert-sandbox';
import type {
  Container,
  ContainerConfig,
  ContainerFilter,
  ContainerStatusResult,
  ExecSyncResult,
  LinuxContainerSecurityContext,
} from './types';
import type {
  Opt,
  WContainer,
  WContainerConfig,
  WContainerFilter,
  WContainerStatusResponse,
  WExecSyncResponse,
  WLinuxContainerSecurityContext,
} from './wire-types';

function securityToWire(s: LinuxContainerSecurityContext): WLinuxContainerSecurityContext {
  return {
    capabilities: s.capabilities
      ? {
          add_capabilities: s.capabilities.addCapabilities,
          drop_capabilities: s.capabilities.dropCapabilities,
          add_ambient_capabilities: s.capabilities.addAmbientCapabilities,
        }
      : undefined,
    privileged: s.privileged,
    namespace_options: s.namespaceOptions ? namespaceOptionToWire(s.namespaceOptions) : undefined,
    selinux_options: s.selinuxOptions ? seLinuxToWire(s.selinuxOptions) : undefined,
    run_as_user: int64ValueToWire(s.runAsUser),
    run_as_group: int64ValueToWire(s.runAsGroup),
    run_as_username: s.runAsUsername,
    readonly_rootfs: s.readonlyRootfs,
    supplemental_groups: s.supplementalGroups,
    supplemental_groups_policy: s.supplementalGroupsPolicy,
    no_new_privs: s.noNewPrivs,
    masked_paths: s.maskedPaths,
    readonly_paths: s.readonlyPaths,
    seccomp: s.seccomp ? securityProfileToWire(s.seccomp) : undefined,
    apparmor: s.apparmor ? securityProfileToWire(s.apparmor) : undefined,
  };
}

function securityFromWire(w: WLinuxContainerSecurityContext): LinuxContainerSecurityContext {
  const policy = enumOf(w.supplemental_groups_policy, GROUP_POLICIES, 'Merge');
  return withIds<LinuxContainerSecurityContext>(w, {
    capabilities: opt(w.capabilities, (c) =>
      compact({
        addCapabilities: strs(c.add_capabilities),
        dropCapabilities: strs(c.drop_capabilities),
        addAmbientCapabilities: strs(c.add_ambient_capabilities),
      }),
    ),
    privileged: w.privileged,
    namespaceOptions: opt(w.namespace_options, namespaceOptionFromWire),
    selinuxOptions: opt(w.selinux_options, seLinuxFromWire),
    runAsUsername: str(w.run_as_username),
    readonlyRootfs: w.readonly_rootfs,
    supplementalGroups: (w.supplemental_groups ?? []).map(num),
    supplementalGroupsPolicy: policy === 'Merge' ? undefined : policy,
    noNewPrivs: w.no_new_privs,
    maskedPaths: strs(w.masked_paths),
    readonlyPaths: strs(w.readonly_paths),
    seccomp: opt(w.seccomp, securityProfileFromWire),
    apparmor: opt(w.apparmor, securityProfileFromWire),
  });
}

export function containerConfigToWire(c: ContainerConfig): WContainerConfig {
  const l = c.linux;
  return {
    metadata: containerMetadataToWire(c.metadata),
    image: imageSpecToWire(c.image),
    command: c.command,
    args: c.args,
    working_dir: c.workingDir,
    // KeyValue.value is bytes upstream (binary-safe env values); UTF-8 here.
    envs: c.envs?.map((e) => ({ key: e.key, value: Buffer.from(e.value, 'utf8') })),
    mounts: c.mounts?.map(mountToWire),
    devices: c.devices?.map((d) => ({ container_path: d.containerPath, host_path: d.hostPath, permissions: d.permissions })),
    labels: c.labels,
    annotations: c.annotations,
    log_path: c.logPath,
    stdin: c.stdin,
    stdin_once: c.stdinOnce,
    tty: c.tty,
    linux: l
      ? {
          resources: l.resources ? resourcesToWire(l.resources) : undefined,
          security_context: l.securityContext ? securityToWire(l.securityContext) : undefined,
        }
      : undefined,
    CDI_devices: c.cdiDevices?.map((name) => ({ name })),
    stop_signal: c.stopSignal,
  };
}

export function containerConfigFromWire(w: Opt<WContainerConfig>): ContainerConfig {
  if (!w) return { metadata: containerMetadataFromWire(undefined), image: imageSpecFromWire(undefined) };
  const stopSignal = stopSignalFromWire(w.stop_signal);
  return {
    metadata: containerMetadataFromWire(w.metadata),
    image: imageSpecFromWire(w.image),
    ...compact({
      command: strs(w.command),
      args: strs(w.args),
      workingDir: str(w.working_dir),
      envs: (w.envs ?? []).map((e) => ({
        key: str(e.key),
        value: Buffer.isBuffer(e.value) ? e.value.toString('utf8') : str(e.value),
      })),
      mounts: (w.mounts ?? []).map(mountFromWire),
      devices: (w.devices ?? []).map((d) => ({
        containerPath: str(d.container_path),
        hostPath: str(d.host_path),
        permissions: str(d.permissions),
      })),
      labels: map(w.labels),
      annotations: map(w.annotations),
      logPath: str(w.log_path),
      stdin: w.stdin,
      stdinOnce: w.stdin_once,
      tty: w.tty,
      linux: opt(w.linux, (l) =>
        compact({ resources: opt(l.resources, resourcesFromWire), securityContext: opt(l.security_context, securityFromWire) }),
      ),
      cdiDevices: (w.CDI_devices ?? []).map((d) => str(d.name)),
      stopSignal: stopSignal === 'SIGNAL_RUNTIME_DEFAULT' ? undefined : stopSignal,
    }),
  };
}

export function containerToWire(c: Container): WContainer {
  return {
    id: c.id,
    pod_sandbox_id: c.podSandboxId,
    metadata: containerMetadataToWire(c.metadata),
    image: imageSpecToWire(c.image),
    image_ref: c.imageRef,
    state: c.state,
    created_at: msToNs(c.createdAt),
    labels: c.labels,
    annotations: c.annotations,
    image_id: c.imageId,
  };
}

export function containerFromWire(w: WContainer): Container {
  return {
    id: str(w.id),
    podSandboxId: str(w.pod_sandbox_id),
    metadata: containerMetadataFromWire(w.metadata),
    image: imageSpecFromWire(w.image),
    imageRef: str(w.image_ref),
    imageId: str(w.image_id),
    state: enumOf(w.state, CONTAINER_STATES, 'CONTAINER_UNKNOWN'),
    createdAt: nsToMs(w.created_at),
    labels: map(w.labels),
    annotations: map(w.annotations),
  };
}

export function containerFilterToWire(f: ContainerFilter): WContainerFilter {
  return {
    id: f.id,
    state: f.state ? { state: f.state } : undefined,
    pod_sandbox_id: f.podSandboxId,
    label_selector: f.labelSelector,
  };
}

export function containerFilterFromWire(w: Opt<WContainerFilter>): ContainerFilter {
  if (!w) return {};
  return compact({
    id: str(w.id),
    state: opt(w.state, (s) => enumOf(s.state, CONTAINER_STATES, 'CONTAINER_CREATED')),
    podSandboxId: str(w.pod_sandbox_id),
    labelSelector: map(w.label_selector),
  });
}

export function containerStatusResultToWire(r: ContainerStatusResult): WContainerStatusResponse {
  return { status: containerStatusToWire(r.status), info: r.info };
}

export function containerStatusResultFromWire(w: WContainerStatusResponse): ContainerStatusResult {
  return { status: containerStatusFromWire(w.status), info: map(w.info) };
}

export function execSyncResultToWire(r: ExecSyncResult): WExecSyncResponse {
  return { stdout: r.stdout, stderr: r.stderr, exit_code: r.exitCode };
}

export function execSyncResultFromWire(w: WExecSyncResponse): ExecSyncResult {
  return {
    stdout: Buffer.isBuffer(w.stdout) ? w.stdout : Buffer.alloc(0),
    stderr: Buffer.isBuffer(w.stderr) ? w.stderr : Buffer.alloc(0),
    exitCode: w.exit_code ?? 0,
  };
}
