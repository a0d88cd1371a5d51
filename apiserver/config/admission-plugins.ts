/**
 * The admission plugins --enable-admission-plugins and --disable-admission-plugins choose from:
 * upstream's names, in upstream's order (the order they run in, whatever the flags' order), and
 * whether each is on by default. Only plugins svc implements are known; another name is a
 * startup error naming the flag, as upstream's.
 *
 * Where we differ: NodeRestriction is on by default (upstream leaves it to the operator; kubeadm
 * and every distribution turn it on, and svc's default authorization is Node,RBAC), and it runs
 * before ServiceAccount (upstream: after), as it did before plugins were selectable, so that a
 * node's mirror pod naming a service account is refused by NodeRestriction saying why. Plugins
 * upstream enables by default that svc does not implement (StorageObjectInUseProtection,
 * PersistentVolumeClaimResize, CertificateApproval, ...) cannot be named.
 */
export interface AdmissionPluginInfo {
  name: string;
  defaultOn: boolean;
}

/** Upstream's AllOrderedPlugins, restricted to what is implemented here (NodeRestriction apart, see above). */
export const ADMISSION_PLUGINS: readonly AdmissionPluginInfo[] = [
  { name: 'AlwaysAdmit', defaultOn: false },
  { name: 'NamespaceLifecycle', defaultOn: true },
  { name: 'LimitRanger', defaultOn: true },
  { name: 'NodeRestriction', defaultOn: true },
  { name: 'ServiceAccount', defaultOn: true },
  { name: 'PodSecurity', defaultOn: true },
  { name: 'Priority', defaultOn: true },
  { name: 'DefaultTolerationSeconds', defaultOn: true },
  { name: 'DefaultStorageClass', defaultOn: true },
  { name: 'RuntimeClass', defaultOn: true },
  { name: 'DefaultIngressClass', defaultOn: true },
  { name: 'MutatingAdmissionPolicy', defaultOn: true },
  { name: 'MutatingAdmissionWebhook', defaultOn: true },
  { name: 'ValidatingAdmissionPolicy', defaultOn: true },
  { name: 'ValidatingAdmissionWebhook', defaultOn: true },
  { name: 'ResourceQuota', defaultOn: true },
  { name: 'AlwaysDeny', defaultOn: false },
];

/** Why the flags cannot be used (each message names its flag), or the enabled plugins in running order. */
export function selectAdmissionPlugins(enable: readonly string[] = [], disable: readonly string[] = []): { plugins: string[] } | { errors: string[] } {
  const known = new Set(ADMISSION_PLUGINS.map((p) => p.name));
  const errors: string[] = [];
  for (const name of enable) if (!known.has(name)) errors.push(`enable-admission-plugins plugin "${name}" is unknown`);
  for (const name of disable) if (!known.has(name)) errors.push(`disable-admission-plugins plugin "${name}" is unknown`);
  const both = enable.filter((n) => disable.includes(n));
  if (both.length > 0) errors.push(`[${[...new Set(both)].sort().join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  if (errors.length > 0) return { errors };
  const on = ADMISSION_PLUGINS.filter((p) => (p.defaultOn || enable.includes(p.name)) && !disable.includes(p.name)).map((p) => p.name);
  return { plugins: on };
}
