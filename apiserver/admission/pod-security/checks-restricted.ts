/**
 * The restricted checks of the Pod Security Standards, with upstream's reasons and details
 * (k8s.io/pod-security-admission/policy). A restricted check may override baseline checks from
 * its version on (the restricted level then runs it instead of them), as upstream's registry.
 */
import { rec } from '../../registry/obj-access';
import { ALLOWED, text, containerList, containers, forbid, inUserNamespace, isWindows, joinQuote, pluralize, podSecurityContext, setters, sortedSet, type CheckFn } from './check-helpers';
import { procMount, validSeccompType, type Check } from './checks-baseline';

const linuxOnly = (fn: CheckFn): CheckFn => (pod) => (isWindows(pod.spec) ? ALLOWED : fn(pod));
const relaxedInUserNamespace = (fn: CheckFn): CheckFn => (pod) => (inUserNamespace(pod.spec) ? ALLOWED : fn(pod));

const allowPrivilegeEscalation: CheckFn = ({ spec }) => {
  const bad = containers(spec).filter((c) => c.sc?.allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length ? forbid('allowPrivilegeEscalation != false', `${containerList(bad)} must set securityContext.allowPrivilegeEscalation=false`) : ALLOWED;
};

const capabilitiesRestricted: CheckFn = ({ spec }) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const caps: string[] = [];
  for (const c of containers(spec)) {
    const capabilities = rec(c.sc?.capabilities);
    if (!capabilities) {
      missingDrop.push(c.name);
      continue;
    }
    const drop = Array.isArray(capabilities.drop) ? capabilities.drop.map(String) : [];
    if (!drop.includes('ALL')) missingDrop.push(c.name);
    const extra = (Array.isArray(capabilities.add) ? capabilities.add.map(String) : []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length) {
      adding.push(c.name);
      caps.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDrop.length) details.push(`${containerList(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) details.push(`${containerList(adding)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`);
  return details.length ? forbid('unrestricted capabilities', details.join('; ')) : ALLOWED;
};

/** The volume types restricted allows; any other is named by its field (upstream's list). */
const ALLOWED_VOLUMES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret']);
const KNOWN_VOLUMES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs',
  'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];

const restrictedVolumes: CheckFn = ({ spec }) => {
  const bad: string[] = [];
  const kinds: string[] = [];
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    const vol = rec(v) ?? {};
    const present = (k: string) => vol[k] !== undefined && vol[k] !== null;
    if ([...ALLOWED_VOLUMES].some(present)) continue;
    bad.push(text(vol.name));
    kinds.push(KNOWN_VOLUMES.find(present) ?? 'unknown');
  }
  if (!bad.length) return ALLOWED;
  const distinct = sortedSet(kinds);
  return forbid(
    'restricted volume types',
    `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', distinct.length)} ${joinQuote(distinct)}`,
  );
};

const runAsNonRoot: CheckFn = ({ spec }) => {
  const podValue = podSecurityContext(spec)?.runAsNonRoot;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const v = c.sc?.runAsNonRoot;
    if (v !== undefined && v !== null) {
      if (v === false) explicit.push(c.name);
    } else if (podValue !== true) implicit.push(c.name);
  }
  const who = setters(podValue === false, explicit);
  if (who.length) return forbid('runAsNonRoot != true', `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  if (implicit.length) return forbid('runAsNonRoot != true', `pod or ${containerList(implicit)} must set securityContext.runAsNonRoot=true`);
  return ALLOWED;
};

const runAsUser: CheckFn = ({ spec }) => {
  const pod = podSecurityContext(spec)?.runAsUser === 0;
  const bad = containers(spec).filter((c) => c.sc?.runAsUser === 0).map((c) => c.name);
  const who = setters(pod, bad);
  return who.length ? forbid('runAsUser=0', `${who.join(' and ')} must not set runAsUser=0`) : ALLOWED;
};

const seccompRestricted: CheckFn = ({ spec }) => {
  const values = new Set<string>();
  const podProfile = rec(podSecurityContext(spec)?.seccompProfile);
  const podBad = podProfile !== undefined && !validSeccompType(podProfile.type);
  if (podBad) values.add(text(podProfile.type));
  const podSet = podProfile !== undefined && !podBad;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const p = rec(c.sc?.seccompProfile);
    if (p) {
      if (!validSeccompType(p.type)) {
        explicit.push(c.name);
        values.add(text(p.type));
      }
    } else if (!podSet) implicit.push(c.name);
  }
  const who = setters(podBad, explicit);
  if (who.length) return forbid('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`);
  if (implicit.length) return forbid('seccompProfile', `pod or ${containerList(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
  return ALLOWED;
};

/** Upstream's restricted checks; `overrides` names the baseline checks each replaces from its version on. */
export const RESTRICTED_CHECKS: readonly Check[] = [
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ minor: 8, fn: allowPrivilegeEscalation }, { minor: 25, fn: linuxOnly(allowPrivilegeEscalation) }] },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minor: 22, fn: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { minor: 25, fn: linuxOnly(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ minor: 35, fn: procMount, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minor: 0, fn: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minor: 0, fn: runAsNonRoot }, { minor: 35, fn: relaxedInUserNamespace(runAsNonRoot) }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minor: 23, fn: runAsUser }, { minor: 35, fn: relaxedInUserNamespace(runAsUser) }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minor: 19, fn: seccompRestricted, overrides: ['seccompProfile_baseline'] },
      { minor: 25, fn: linuxOnly(seccompRestricted), overrides: ['seccompProfile_baseline'] },
    ],
  },
];
