import type { KObject } from '../api/types';
import { get, rec, recs, str, strAt, strs } from '../registry/obj-access';
import { storageClassOf } from '../registry/types/pv-common';
import { BINDING_WAIT_FOR_FIRST_CONSUMER } from '../registry/types/storage-common';
import type { Filter } from './filters';
import { findMatchingVolume, NO_VOLUME_TO_BIND, VOLUME_NODE_AFFINITY_CONFLICT, volumeReachableFrom } from './volume-match';

/** The claims, volumes and classes the volume filter reads (the scheduler's informers). */
export interface VolumeLister {
  claim(namespace: string, name: string): KObject | undefined;
  volume(name: string): KObject | undefined;
  storageClass(name: string): KObject | undefined;
  volumes(): KObject[];
}

/** Upstream ErrReasonPVNotExist and the PreFilter reasons of VolumeBinding. */
export const PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';

/** What the pod's claims need from a node. */
export interface PodVolumes {
  /** Bound claims' volumes by name (undefined: the volume does not exist). */
  bound: Array<{ name: string; pv: KObject | undefined }>;
  /** Unbound claims of WaitForFirstConsumer classes, with their class. */
  delayed: Array<{ claim: KObject; storageClass: KObject | undefined }>;
}

/** The claim names of the pod's volumes: persistentVolumeClaim sources and generic ephemeral volumes (`<pod>-<volume>`, as upstream). */
export function podClaimNames(pod: KObject): string[] {
  const out: string[] = [];
  for (const v of recs(get(pod, 'spec', 'volumes'))) {
    const claim = str(get(v, 'persistentVolumeClaim', 'claimName'));
    if (claim) out.push(claim);
    else if (rec(v.ephemeral)) out.push(`${pod.metadata.name}-${str(v.name)}`);
  }
  return out;
}

/**
 * Upstream VolumeBinding PreFilter: every claim must exist and not be terminating, and every
 * unbound claim must wait for its first consumer (an unbound claim of an Immediate class is
 * the binder's to bind first). A string is why the pod cannot be scheduled anywhere.
 */
export function podVolumes(pod: KObject, lister: VolumeLister): PodVolumes | string {
  const ns = pod.metadata.namespace ?? '';
  const out: PodVolumes = { bound: [], delayed: [] };
  for (const name of podClaimNames(pod)) {
    const claim = lister.claim(ns, name);
    if (!claim) return `persistentvolumeclaim "${name}" not found`;
    if (claim.metadata.deletionTimestamp) return `persistentvolumeclaim "${name}" is being deleted`;
    const volumeName = strAt(claim, 'spec', 'volumeName');
    if (volumeName) {
      out.bound.push({ name: volumeName, pv: lister.volume(volumeName) });
      continue;
    }
    const className = storageClassOf(claim);
    const sc = className ? lister.storageClass(className) : undefined;
    if (sc?.volumeBindingMode !== BINDING_WAIT_FOR_FIRST_CONSUMER) return UNBOUND_IMMEDIATE;
    out.delayed.push({ claim, storageClass: sc });
  }
  return out;
}

/** Upstream's topology check of dynamic provisioning: no allowedTopologies, or one term whose every requirement the node's labels meet. */
function provisionableOn(sc: KObject | undefined, node: KObject): boolean {
  const provisioner = str(sc?.provisioner) ?? '';
  if (!sc || provisioner === '' || provisioner === 'kubernetes.io/no-provisioner') return false;
  const terms = recs(sc.allowedTopologies);
  if (terms.length === 0) return true;
  const labels = node.metadata.labels ?? {};
  return terms.some((t) => recs(t.matchLabelExpressions).every((e) => strs(e.values).includes(labels[str(e.key) ?? ''] ?? '\0')));
}

/**
 * Upstream VolumeBinding Filter: bound claims' volumes must be reachable from the node (their
 * node affinity); each delayed claim needs an Available volume on the node that fits it, or a
 * class that can provision there.
 */
export function volumeBindingFilter(volumes: PodVolumes, lister: VolumeLister): Filter {
  return (_pod, node) => {
    for (const b of volumes.bound) {
      if (!b.pv) return [PV_NOT_EXIST];
      if (!volumeReachableFrom(b.pv, node.node)) return [VOLUME_NODE_AFFINITY_CONFLICT];
    }
    for (const d of volumes.delayed) {
      if (findMatchingVolume(d.claim, lister.volumes(), { node: node.node, delayBinding: true })) continue;
      if (!provisionableOn(d.storageClass, node.node)) return [NO_VOLUME_TO_BIND];
    }
    return [];
  };
}
