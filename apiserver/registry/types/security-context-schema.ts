import { atomicList, bool, described, int64, obj, ptr, str } from '../schema-builders';

/** core/v1 SecurityContext (per container) and PodSecurityContext, with upstream's field numbers. */

const V1 = 'k8s.io.api.core.v1';

const seLinuxOptionsSchema = obj(`${V1}.SELinuxOptions`, {
  user: [1, str('The SELinux user label.')],
  role: [2, str('The SELinux role label.')],
  type: [3, str('The SELinux type label.')],
  level: [4, str('The SELinux level label.')],
});

const windowsOptionsSchema = obj(`${V1}.WindowsSecurityContextOptions`, {
  gmsaCredentialSpecName: [1, ptr(str('The name of the GMSA credential spec to use.'))],
  gmsaCredentialSpec: [2, ptr(str('The contents of the GMSA credential spec named by gmsaCredentialSpecName.'))],
  runAsUserName: [3, ptr(str('The Windows user name the entrypoint runs as.'))],
  hostProcess: [4, ptr(bool('Whether the container runs as a Windows HostProcess container.'))],
});

const seccompProfileSchema = obj(`${V1}.SeccompProfile`, {
  type: [1, ptr(str('RuntimeDefault, Unconfined or Localhost.'))],
  localhostProfile: [2, ptr(str('A profile file on the node, relative to the kubelet\'s seccomp directory; only for Localhost.'))],
});

const appArmorProfileSchema = obj(`${V1}.AppArmorProfile`, {
  type: [1, ptr(str('RuntimeDefault, Unconfined or Localhost.'))],
  localhostProfile: [2, ptr(str('The name of a profile loaded on the node; only for Localhost.'))],
});

const capabilitiesSchema = obj(`${V1}.Capabilities`, {
  add: [1, atomicList(str(), 'POSIX capabilities to add.')],
  drop: [2, atomicList(str(), 'POSIX capabilities to drop.')],
});

export const securityContextSchema = obj(`${V1}.SecurityContext`, {
  capabilities: [1, described('Capabilities to add to or drop from the container runtime\'s defaults.', capabilitiesSchema)],
  privileged: [2, ptr(bool('Run the container privileged, like root on the host.'))],
  seLinuxOptions: [3, described('The SELinux context of the container; random per container when unset.', seLinuxOptionsSchema)],
  windowsOptions: [10, described('Windows-specific settings of the container.', windowsOptionsSchema)],
  runAsUser: [4, ptr(int64('The UID the entrypoint runs as; the image\'s user when unset.'))],
  runAsGroup: [8, ptr(int64('The GID the entrypoint runs as; the runtime default when unset.'))],
  runAsNonRoot: [5, ptr(bool('Require the container to run as a non-root user; the kubelet refuses to start it otherwise.'))],
  readOnlyRootFilesystem: [6, ptr(bool('Mount the container\'s root filesystem read-only.'))],
  allowPrivilegeEscalation: [7, ptr(bool('Whether a process may gain more privileges than its parent (no_new_privs).'))],
  procMount: [9, ptr(str('Default or Unmasked: how /proc is masked in the container.'))],
  seccompProfile: [11, described('The seccomp profile of the container; overrides the pod\'s.', seccompProfileSchema)],
  appArmorProfile: [12, described('The AppArmor profile of the container; overrides the pod\'s.', appArmorProfileSchema)],
});

const sysctlSchema = obj(`${V1}.Sysctl`, {
  name: [1, ptr(str('The name of the sysctl.'))],
  value: [2, ptr(str('The value to set.'))],
});

export const podSecurityContextSchema = obj(`${V1}.PodSecurityContext`, {
  seLinuxOptions: [1, described('The SELinux context applied to all containers.', seLinuxOptionsSchema)],
  windowsOptions: [8, described('Windows-specific settings applied to all containers.', windowsOptionsSchema)],
  runAsUser: [2, ptr(int64('The UID containers\' entrypoints run as, unless a container sets its own.'))],
  runAsGroup: [6, ptr(int64('The GID containers\' entrypoints run as, unless a container sets its own.'))],
  runAsNonRoot: [3, ptr(bool('Require all containers to run as a non-root user.'))],
  supplementalGroups: [4, atomicList(int64(), 'Groups added to each container\'s first process, besides its primary GID.')],
  supplementalGroupsPolicy: [12, ptr(str('Merge or Strict: whether groups from the image\'s /etc/group are added.'))],
  fsGroup: [5, ptr(int64('A supplemental group owning the pod\'s volumes and added to all containers.'))],
  sysctls: [7, atomicList(sysctlSchema, 'Namespaced kernel parameters set for the pod.')],
  fsGroupChangePolicy: [9, ptr(str('OnRootMismatch or Always: when volume ownership is changed to fsGroup.'))],
  seccompProfile: [10, described('The seccomp profile of all containers.', seccompProfileSchema)],
  appArmorProfile: [11, described('The AppArmor profile of all containers.', appArmorProfileSchema)],
  seLinuxChangePolicy: [13, ptr(str('MountOption or Recursive: how the SELinux label is applied to volumes.'))],
});
