import { labelSelectorRequirements, selectorMatchesLabels } from '../api/label-selector';
import type { KObject } from '../api/types';
import { get, rec, recs, str, strAt, strs } from '../registry/obj-access';
import { compareQuantities, parseQuantity, type Quantity } from '../registry/quantity';
import { storageClassOf } from '../registry/types/pv-common';
import { termMatches } from './node-affinity';

/**
 * Matching PersistentVolumeClaims to PersistentVolumes, shared by the PV binder (which binds) and
 * the scheduler's volume filter (which asks whether a node could be given a volume): upstream's
 * FindMatchingVolume and CheckVolumeNodeAffinity.
 */

/** The well-known annotations of binding (upstream pv.kubernetes.io/..., volume.kubernetes.io/...), in svc's spelling; readers accept both (group-names.ts). */
export const ANN_BIND_COMPLETED = 'pv.svc.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.svc.io/bound-by-controller';
export const ANN_SELECTED_NODE = 'volume.svc.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.svc.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.svc.io/storage-provisioner';
export const ANN_PROVISIONED_BY = 'pv.svc.io/provisioned-by';

/** Upstream's reason when a node cannot reach a bound claim's volume. */
export const VOLUME_NODE_AFFINITY_CONFLICT = 'node(s) had volume node affinity conflict';
/** Upstream's reason when no volume could be bound or provisioned for a delayed-binding claim on the node. */
export const NO_VOLUME_TO_BIND = "node(s) didn't find available persistent volumes to bind";

/** The requested storage of a claim; undefined when it asks for none (or an unparsable amount). */
export function claimRequest(claim: KObject): Quantity | undefined {
  const v = get(claim, 'spec', 'resources', 'requests', 'storage');
  return typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
}

function volumeCapacity(pv: KObject): Quantity | undefined {
  const v = get(pv, 'spec', 'capacity', 'storage');
  return typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
}

/** Upstream CheckVolumeNodeAffinity: a volume without required node affinity is reachable from every node; else one term must match. */
export function volumeReachableFrom(pv: KObject, node: KObject): boolean {
  const required = rec(get(pv, 'spec', 'nodeAffinity', 'required'));
  if (!required) return true;
  return recs(required.nodeSelectorTerms).some((t) => termMatches(t, node));
}

/** Whether the volume's claimRef names this claim (by uid when the ref carries one). */
export function claimRefIs(pv: KObject, claim: KObject): boolean {
  const ref = rec(get(pv, 'spec', 'claimRef'));
  if (!ref) return false;
  if (str(ref.name) !== claim.metadata.name || (str(ref.namespace) ?? '') !== (claim.metadata.namespace ?? '')) return false;
  const uid = str(ref.uid) ?? '';
  return uid === '' || uid === claim.metadata.uid;
}

/** Upstream checkAccessModes: the volume offers every mode the claim asks for. */
function accessModesFit(claim: KObject, pv: KObject): boolean {
  const offered = new Set(strs(get(pv, 'spec', 'accessModes')));
  return strs(get(claim, 'spec', 'accessModes')).every((m) => offered.has(m));
}

const volumeMode = (o: KObject) => strAt(o, 'spec', 'volumeMode') || 'Filesystem';

/** Whether the volume's properties fit the claim: mode, class, selector, access modes, size (not its binding state). */
export function volumeFits(claim: KObject, pv: KObject): boolean {
  if (volumeMode(claim) !== volumeMode(pv)) return false;
  if (storageClassOf(pv) !== storageClassOf(claim)) return false;
  const selector = get(claim, 'spec', 'selector');
  if (selector !== undefined && selector !== null && !selectorMatchesLabels(labelSelectorRequirements(selector), pv.metadata.labels)) return false;
  if (!accessModesFit(claim, pv)) return false;
  const want = claimRequest(claim);
  const have = volumeCapacity(pv);
  return !want || (!!have && compareQuantities(have, want) >= 0);
}

export interface MatchOptions {
  /** Only volumes reachable from this node (delayed binding once a node is chosen). */
  node?: KObject;
  /** The claim's class binds WaitForFirstConsumer: without a node only a volume pre-bound to the claim matches. */
  delayBinding?: boolean;
}

/**
 * Upstream FindMatchingVolume: a volume pre-bound to the claim (its claimRef names it) that fits
 * wins; else the smallest Available, unclaimed, not terminating volume that fits (on the node,
 * when one is given). With delayed binding and no node, only a pre-bound volume.
 */
export function findMatchingVolume(claim: KObject, volumes: Iterable<KObject>, opts: MatchOptions = {}): KObject | undefined {
  let best: KObject | undefined;
  let bestSize: Quantity | undefined;
  for (const pv of volumes) {
    if (pv.metadata.deletionTimestamp || !volumeFits(claim, pv)) continue;
    if (opts.node && !volumeReachableFrom(pv, opts.node)) continue;
    if (claimRefIs(pv, claim)) return pv;
    if (rec(get(pv, 'spec', 'claimRef')) || strAt(pv, 'status', 'phase') !== 'Available') continue;
    if (opts.delayBinding && !opts.node) continue;
    const size = volumeCapacity(pv);
    if (!best || (size && bestSize && compareQuantities(size, bestSize) < 0)) {
      best = pv;
      bestSize = size;
    }
  }
  return best;
}
