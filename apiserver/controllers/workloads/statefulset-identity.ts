import { bothKeys } from '../../api/group-names';
import type { KObject, OwnerReference } from '../../api/types';
import { get, num, rec, recs, str } from '../../registry/obj-access';
import { REVISION_HASH_LABEL } from './history';
import { podFromTemplate } from './pod-control';

/**
 * A StatefulSet pod's identity and storage (upstream stateful_set_utils.go): the pod of ordinal i
 * is <set>-<i>, with hostname = its name and subdomain = spec.serviceName, the pod-name and
 * pod-index labels, and for each claim template a volume of the template's name backed by the
 * claim <template>-<set>-<i>. Claims follow persistentVolumeClaimRetentionPolicy through owner
 * references (upstream's StatefulSetAutoDeletePVC, GA in 1.32).
 */

/** Upstream statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index, in svc's spelling; pods carry both spellings (bothKeys), as nodes carry both families of well-known labels, because Services and tools select on upstream's. */
export const POD_NAME_LABEL = 'statefulset.svc.io/pod-name';
export const POD_INDEX_LABEL = 'apps.svc.io/pod-index';
const POD_NAME_LABELS = bothKeys(POD_NAME_LABEL);
const POD_INDEX_LABELS = bothKeys(POD_INDEX_LABEL);

const ORDINAL = /^(.*)-([0-9]+)$/;

/** Upstream getParentNameAndOrdinal: the set's name and the ordinal a pod's name carries; ordinal -1 when it carries none. */
export function parentAndOrdinal(pod: KObject): { parent: string; ordinal: number } {
  const m = ORDINAL.exec(pod.metadata.name ?? '');
  if (!m) return { parent: '', ordinal: -1 };
  const ordinal = Number(m[2]);
  return { parent: m[1], ordinal: ordinal <= 2 ** 31 - 1 ? ordinal : -1 };
}

export const ordinalOf = (pod: KObject): number => parentAndOrdinal(pod).ordinal;

/** Upstream isMemberOf: the pod's name says it belongs to the set. */
export function isMemberOf(set: KObject, pod: KObject): boolean {
  return parentAndOrdinal(pod).parent === set.metadata.name;
}

export const podName = (set: KObject, ordinal: number): string => `${set.metadata.name}-${ordinal}`;

export const startOrdinal = (set: KObject): number => num(get(set, 'spec', 'ordinals', 'start')) ?? 0;
export const replicasOf = (set: KObject): number => num(get(set, 'spec', 'replicas')) ?? 1;

/** Upstream podInOrdinalRange: start ≤ ordinal < start + replicas. */
export function inOrdinalRange(pod: KObject, set: KObject): boolean {
  const o = ordinalOf(pod);
  return o >= startOrdinal(set) && o < startOrdinal(set) + replicasOf(set);
}

const claimTemplates = (set: KObject) => recs(get(set, 'spec', 'volumeClaimTemplates'));
const templateName = (claim: Record<string, unknown>) => str(rec(claim.metadata)?.name) ?? '';

/** Upstream getPersistentVolumeClaimName. */
export const claimName = (set: KObject, template: string, ordinal: number): string => `${template}-${set.metadata.name}-${ordinal}`;

/**
 * Upstream getPersistentVolumeClaims: the claims of the pod of this ordinal, by template name, each
 * labelled with the template's labels and the set's selector matchLabels.
 */
export function claimsFor(set: KObject, ordinal: number): Array<{ template: string; claim: KObject }> {
  const matchLabels = (rec(get(set, 'spec', 'selector', 'matchLabels')) ?? {}) as Record<string, string>;
  return claimTemplates(set).map((t) => {
    const meta = rec(t.metadata) ?? {};
    const name = claimName(set, templateName(t), ordinal);
    const labels = { ...((rec(meta.labels) ?? {}) as Record<string, string>), ...matchLabels };
    const claim: KObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: set.metadata.namespace, labels },
      spec: structuredClone(t.spec ?? {}),
    };
    if (meta.annotations) claim.metadata.annotations = { ...(meta.annotations as Record<string, string>) };
    return { template: templateName(t), claim };
  });
}

function setIdentity(set: KObject, pod: KObject, ordinal: number): void {
  const name = podName(set, ordinal);
  const labels = (pod.metadata.labels ??= {});
  for (const k of POD_NAME_LABELS) labels[k] = name;
  for (const k of POD_INDEX_LABELS) labels[k] = String(ordinal);
}

/**
 * Upstream newStatefulSetPod + setPodRevision: the pod of an ordinal from the set (at the revision
 * whose template it carries), with identity, claim volumes and the revision label.
 */
export function newStatefulSetPod(set: KObject, ordinal: number, ref: OwnerReference, revision: string): KObject {
  const name = podName(set, ordinal);
  const pod = podFromTemplate(get(set, 'spec', 'template'), ref, { name });
  pod.metadata.namespace = set.metadata.namespace;
  setIdentity(set, pod, ordinal);
  pod.metadata.labels![REVISION_HASH_LABEL] = revision;
  const spec = pod.spec as Record<string, unknown>;
  spec.hostname = name;
  const service = str(get(set, 'spec', 'serviceName'));
  if (service) spec.subdomain = service;
  const claims = claimsFor(set, ordinal);
  if (claims.length > 0) {
    const names = new Set(claims.map((c) => c.template));
    const kept = recs(spec.volumes).filter((v) => !names.has(str(v.name) ?? ''));
    spec.volumes = [...claims.map((c) => ({ name: c.template, persistentVolumeClaim: { claimName: c.claim.metadata.name } })), ...kept];
  }
  return pod;
}

/** Upstream identityMatches: name, namespace and the identity labels of the pod's ordinal. */
export function identityMatches(set: KObject, pod: KObject): boolean {
  const { parent, ordinal } = parentAndOrdinal(pod);
  if (ordinal < 0 || parent !== set.metadata.name || pod.metadata.namespace !== set.metadata.namespace) return false;
  const labels = pod.metadata.labels ?? {};
  return POD_NAME_LABELS.every((k) => labels[k] === pod.metadata.name) && POD_INDEX_LABELS.every((k) => labels[k] === String(ordinal));
}

/** Upstream updateIdentity, for a pod that exists: only its labels (hostname and subdomain are immutable on a pod). */
export function fixIdentity(set: KObject, pod: KObject): void {
  setIdentity(set, pod, ordinalOf(pod));
}

/** Upstream storageMatches: every claim template has its volume, backed by the ordinal's claim. */
export function storageMatches(set: KObject, pod: KObject): boolean {
  const ordinal = ordinalOf(pod);
  if (ordinal < 0) return false;
  const volumes = new Map(recs(get(pod, 'spec', 'volumes')).map((v) => [str(v.name) ?? '', v]));
  return claimsFor(set, ordinal).every((c) => str(get(volumes.get(c.template), 'persistentVolumeClaim', 'claimName')) === c.claim.metadata.name);
}

export function podRevision(pod: KObject): string {
  return pod.metadata.labels?.[REVISION_HASH_LABEL] ?? '';
}

type Policy = { whenDeleted: string; whenScaled: string };

export function retentionPolicy(set: KObject): Policy {
  const p = rec(get(set, 'spec', 'persistentVolumeClaimRetentionPolicy')) ?? {};
  return { whenDeleted: str(p.whenDeleted) === 'Delete' ? 'Delete' : 'Retain', whenScaled: str(p.whenScaled) === 'Delete' ? 'Delete' : 'Retain' };
}

const ownedBy = (claim: KObject, owner: KObject) => (claim.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid);

/**
 * The owners a claim should have under the retention policy (upstream claimOwnerMatchesSetAndPod /
 * updateClaimOwnerRefForSetAndPod): the set when claims go with a deleted set (and the pod is not
 * scaled away under whenScaled Delete), the pod when its claim goes with the pod scaled away.
 */
function wantedOwners(set: KObject, pod: KObject): { set: boolean; pod: boolean } {
  const p = retentionPolicy(set);
  const scaledDown = !inOrdinalRange(pod, set);
  if (p.whenScaled === 'Retain') return { set: p.whenDeleted === 'Delete', pod: false };
  if (p.whenDeleted === 'Retain') return { set: false, pod: scaledDown };
  return { set: !scaledDown, pod: scaledDown };
}

/** Whether the claim's owner references agree with the policy for this set and pod. */
export function claimOwnersMatch(claim: KObject, set: KObject, pod: KObject): boolean {
  const want = wantedOwners(set, pod);
  return ownedBy(claim, set) === want.set && ownedBy(claim, pod) === want.pod;
}

/** The claim's owner references brought in line with the policy (other owners kept); plain references, as upstream's setOwnerRef. */
export function claimOwnerRefs(claim: KObject, set: KObject, pod: KObject): OwnerReference[] {
  const want = wantedOwners(set, pod);
  const refs = (claim.metadata.ownerReferences ?? []).filter((r) => r.uid !== set.metadata.uid && r.uid !== pod.metadata.uid);
  if (want.set) refs.push({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.metadata.name!, uid: set.metadata.uid! });
  if (want.pod && pod.metadata.uid) refs.push({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid });
  return refs;
}

/** Upstream hasStaleOwnerRef: the claim is owned by an earlier pod of this name (another uid), and waits for the garbage collector. */
export function claimHasStalePodOwner(claim: KObject, pod: KObject): boolean {
  const ref = (claim.metadata.ownerReferences ?? []).find((r) => r.kind === 'Pod' && r.name === pod.metadata.name);
  return ref !== undefined && ref.uid !== pod.metadata.uid;
}
