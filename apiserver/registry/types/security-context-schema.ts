import { atomicList, bool, int64, obj, ptr, str } from '../schema-builders';

/** core/v1 SecurityContext (per container) and PodSecurityContext, with upstream's field numbers. */

const V1 = 'k8s.io.api.core.v1';

const seLinuxOptionsSchema = obj(`${V1}.SELinuxOptions`, {
  user: [1, str()],
  role: [2, str()],
  type: [3, str()],
  level: [4, str()],
});

const windowsOptionsSchema = obj(`${V1}.WindowsSecurityContextOptions`, {
  gmsaCredentialSpecName: [1, ptr(str())],
  gmsaCredentialSpec: [2, ptr(str())],
  runAsUserName: [3, ptr(str())],
  hostProcess: [4, ptr(bool())],
});

const seccompProfileSchema = obj(`${V1}.SeccompProfile`, { type: [1, ptr(str('RuntimeDefault, Unconfined or Localhost.'))], localhostProfile: [2, ptr(str())] });

const appArmorProfileSchema = obj(`${V1}.AppArmorProfile`, { type: [1, ptr(str('RuntimeDefault, Unconfined or Localhost.'))], localhostProfile: [2, ptr(str())] });

export const securityContextSchema = obj(`${V1}.SecurityContext`, {
  capabilities: [1, obj(`${V1}.Capabilities`, { add: [1, atomicList(str())], drop: [2, atomicList(str())] })],
  privileged: [2, ptr(bool())],
  seLinuxOptions: [3, seLinuxOptionsSchema],
  windowsOptions: [10, windowsOptionsSchema],
  runAsUser: [4, ptr(int64())],
  runAsGroup: [8, ptr(int64())],
  runAsNonRoot: [5, ptr(bool())],
  readOnlyRootFilesystem: [6, ptr(bool())],
  allowPrivilegeEscalation: [7, ptr(bool())],
  procMount: [9, ptr(str())],
  seccompProfile: [11, seccompProfileSchema],
  appArmorProfile: [12, appArmorProfileSchema],
});

export const podSecurityContextSchema = obj(`${V1}.PodSecurityContext`, {
  seLinuxOptions: [1, seLinuxOptionsSchema],
  windowsOptions: [8, windowsOptionsSchema],
  runAsUser: [2, ptr(int64())],
  runAsGroup: [6, ptr(int64())],
  runAsNonRoot: [3, ptr(bool())],
  supplementalGroups: [4, atomicList(int64())],
  supplementalGroupsPolicy: [12, ptr(str())],
  fsGroup: [5, ptr(int64())],
  sysctls: [7, atomicList(obj(`${V1}.Sysctl`, { name: [1, ptr(str())], value: [2, ptr(str())] }))],
  fsGroupChangePolicy: [9, ptr(str())],
  seccompProfile: [10, seccompProfileSchema],
  appArmorProfile: [11, appArmorProfileSchema],
  seLinuxChangePolicy: [13, ptr(str())],
});
