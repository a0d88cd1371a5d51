import type { KObject } from '../../api/types';
import { get, num, str } from '../../registry/obj-access';
import { scaledValue } from '../../registry/types/workload-common';
import { REVISION_HASH_LABEL } from './history';
import { isPodAvailable, isPodReady, podPhase } from './pod-state';
import { shouldRunOn, TEMPLATE_GENERATION_LABEL, templateGeneration } from './daemonset-placement';

/**
 * What a DaemonSet sync decides, node by node (upstream daemon_controller.go podsShouldBeOnNode
 * and update.go rollingUpdate), as pure functions of the cached nodes and pods: which nodes need a
 * pod, which pods go, and the status counts.
 */

/** Upstream podByCreationTimestampAndPhase: scheduled pods first, then oldest first, then by name. */
export function byAgeScheduledFirst(a: KObject, b: KObject): number {
  const an = !!str(get(a, 'spec', 'nodeName'));
  const bn = !!str(get(b, 'spec', 'nodeName'));
  if (an !== bn) return an ? -1 : 1;
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

/** Upstream IsPodUpdated: the pod carries the current hash, or the current template generation. */
export function isPodUpdated(pod: KObject, hash: string, ds: KObject): boolean {
  const labels = pod.metadata.labels ?? {};
  const generation = templateGeneration(ds);
  return (hash !== '' && labels[REVISION_HASH_LABEL] === hash) || (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation));
}

const minReady = (ds: KObject) => num(get(ds, 'spec', 'minReadySeconds')) ?? 0;

/** Upstream util.AllowsSurge: RollingUpdate with a non-zero maxSurge. */
export function allowsSurge(ds: KObject): boolean {
  if (str(get(ds, 'spec', 'updateStrategy', 'type')) !== 'RollingUpdate') return false;
  const surge = scaledValue(get(ds, 'spec', 'updateStrategy', 'rollingUpdate', 'maxSurge'), 1, true);
  return surge !== undefined && surge !== 0;
}

export interface NodeDecision {
  create: boolean;
  remove: KObject[];
  /** Failed pods being deleted (a FailedDaemonPod event each). */
  failed: KObject[];
  /** A failed pod still in its back-off: sync again after this long. */
  retryAfterMs?: number;
}

/** How long a failed pod on a node waits before it is deleted again (upstream failedPodsBackoff: 1 s doubling to 15 min). */
export interface FailedPodBackoff {
  /** ms left of the key's back-off at nowMs (0: not backing off). */
  remaining(key: string, nowMs: number): number;
  /** Starts (or doubles) the key's back-off from nowMs. */
  next(key: string, nowMs: number): void;
}

/** Upstream podsShouldBeOnNode. */
export function podsShouldBeOnNode(node: KObject, daemonPods: readonly KObject[], ds: KObject, hash: string, nowMs: number, backoff: FailedPodBackoff, backoffKey: string): NodeDecision {
  const { shouldRun, shouldContinueRunning } = shouldRunOn(node, ds);
  const out: NodeDecision = { create: false, remove: [], failed: [] };
  if (shouldRun && daemonPods.length === 0) {
    out.create = true;
    return out;
  }
  if (!shouldContinueRunning) {
    out.remove = daemonPods.filter((p) => !p.metadata.deletionTimestamp);
    return out;
  }
  const running: KObject[] = [];
  for (const pod of daemonPods) {
    if (pod.metadata.deletionTimestamp) continue;
    const phase = podPhase(pod);
    if (phase === 'Failed') {
      // The kubelet may refuse the pod again and again: back off instead of hot-looping.
      const wait = backoff.remaining(backoffKey, nowMs);
      if (wait > 0) {
        out.retryAfterMs = Math.min(out.retryAfterMs ?? wait, wait);
        continue;
      }
      backoff.next(backoffKey, nowMs);
      out.failed.push(pod);
      out.remove.push(pod);
    } else if (phase === 'Succeeded') out.remove.push(pod);
    else running.push(pod);
  }
  running.sort(byAgeScheduledFirst);
  if (!allowsSurge(ds)) {
    // One pod per node: all but the oldest go.
    out.remove.push(...running.slice(1));
    return out;
  }
  if (running.length <= 1) {
    if (running.length === 0 && shouldRun) out.create = true;
    return out;
  }
  // Surging: the oldest new and the oldest old pod may stand side by side while the new one is
  // not available; the old one goes when it is not ready or the new one is available.
  let oldestNew: KObject | undefined;
  let oldestOld: KObject | undefined;
  for (const pod of running) {
    if (pod.metadata.labels?.[REVISION_HASH_LABEL] === hash) {
      if (!oldestNew) {
        oldestNew = pod;
        continue;
      }
    } else if (!oldestOld) {
      oldestOld = pod;
      continue;
    }
    out.remove.push(pod);
  }
  if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, minReady(ds), nowMs))) out.remove.push(oldestOld);
  return out;
}

/** Upstream findUpdatedPodsOnNode: the node's live new and old pod; ok false with more than one of either. */
function updatedPodsOnNode(ds: KObject, pods: readonly KObject[], hash: string): { newPod?: KObject; oldPod?: KObject; ok: boolean } {
  let newPod: KObject | undefined;
  let oldPod: KObject | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, ds)) {
      if (newPod) return { ok: false };
      newPod = pod;
    } else {
      if (oldPod) return { ok: false };
      oldPod = pod;
    }
  }
  return { newPod, oldPod, ok: true };
}

/** Upstream updatedDesiredNodeCounts: maxSurge, maxUnavailable (1 when both come out 0) and desiredNumberScheduled; nodes that should run a pod get an entry. */
function desiredCounts(ds: KObject, nodes: readonly KObject[], nodeToPods: Map<string, KObject[]>): { maxSurge: number; maxUnavailable: number; desired: number } {
  let desired = 0;
  for (const node of nodes) {
    if (!shouldRunOn(node, ds).shouldRun) continue;
    desired++;
    if (!nodeToPods.has(node.metadata.name!)) nodeToPods.set(node.metadata.name!, []);
  }
  const rolling = get(ds, 'spec', 'updateStrategy', 'rollingUpdate');
  let maxUnavailable = scaledValue(get(rolling, 'maxUnavailable'), desired, true) ?? 0;
  const maxSurge = allowsSurge(ds) ? (scaledValue(get(rolling, 'maxSurge'), desired, true) ?? 0) : 0;
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable, desired };
}

/**
 * Upstream rollingUpdate. Without surge: old pods are deleted (unavailable ones always, available
 * ones while fewer than maxUnavailable nodes are unavailable) and the manage step makes their
 * replacements. With surge: new pods are made beside old ones (where the old one is unavailable,
 * and on up to maxSurge more nodes), and an old pod goes once the new one beside it is available.
 */
export function rollingUpdatePlan(ds: KObject, nodes: readonly KObject[], nodeToPodsIn: ReadonlyMap<string, KObject[]>, hash: string, nowMs: number): { remove: KObject[]; createOn: string[] } {
  const nodeToPods = new Map(nodeToPodsIn);
  const { maxSurge, maxUnavailable, desired } = desiredCounts(ds, nodes, nodeToPods);
  const available = (p: KObject) => isPodAvailable(p, minReady(ds), nowMs);
  if (maxSurge === 0) {
    let unavailable = 0;
    const replace: KObject[] = [];
    const candidates: KObject[] = [];
    for (const pods of nodeToPods.values()) {
      const { newPod, oldPod, ok } = updatedPodsOnNode(ds, pods, hash);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) unavailable++;
      else if (newPod) {
        if (!available(newPod)) unavailable++;
      } else if (oldPod && !available(oldPod)) {
        replace.push(oldPod);
        unavailable++;
      } else if (oldPod && unavailable < maxUnavailable) candidates.push(oldPod);
    }
    const room = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    return { remove: [...replace, ...candidates.slice(0, room)], createOn: [] };
  }
  const byName = new Map(nodes.map((n) => [n.metadata.name!, n]));
  const remove: KObject[] = [];
  const notWanted: KObject[] = [];
  const candidateNodes: string[] = [];
  const allowedNodes: string[] = [];
  let surging = 0;
  let numAvailable = 0;
  for (const [nodeName, pods] of nodeToPods) {
    const { newPod, oldPod, ok } = updatedPodsOnNode(ds, pods, hash);
    if (!ok) {
      surging++;
      continue;
    }
    if (oldPod ? available(oldPod) : newPod ? available(newPod) : false) numAvailable++;
    if (!oldPod) continue;
    const node = byName.get(nodeName);
    const wanted = node !== undefined && shouldRunOn(node, ds).shouldRun;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!wanted) remove.push(oldPod);
        else allowedNodes.push(nodeName);
      } else if (!wanted) notWanted.push(oldPod);
      else if (surging < maxSurge) candidateNodes.push(nodeName);
    } else if (!available(newPod)) surging++;
    else remove.push(oldPod);
  }
  // Pods on nodes that no longer qualify go only while enough others are available.
  const deletable = Math.min(Math.max(0, numAvailable - desired), notWanted.length);
  remove.push(...notWanted.slice(0, deletable));
  const room = Math.min(Math.max(0, maxSurge - surging), candidateNodes.length);
  return { remove, createOn: [...allowedNodes, ...candidateNodes.slice(0, room)] };
}

export interface DaemonSetCounts {
  desiredNumberScheduled: number;
  currentNumberScheduled: number;
  numberMisscheduled: number;
  numberReady: number;
  updatedNumberScheduled: number;
  numberAvailable: number;
  numberUnavailable: number;
}

/** Upstream updateDaemonSetStatus's counts: per node, its oldest daemon pod. */
export function daemonSetCounts(ds: KObject, nodes: readonly KObject[], nodeToPods: ReadonlyMap<string, KObject[]>, hash: string, nowMs: number): DaemonSetCounts {
  const c: DaemonSetCounts = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, updatedNumberScheduled: 0, numberAvailable: 0, numberUnavailable: 0 };
  for (const node of nodes) {
    const pods = [...(nodeToPods.get(node.metadata.name!) ?? [])];
    if (!shouldRunOn(node, ds).shouldRun) {
      if (pods.length > 0) c.numberMisscheduled++;
      continue;
    }
    c.desiredNumberScheduled++;
    if (pods.length === 0) continue;
    c.currentNumberScheduled++;
    const pod = pods.sort(byAgeScheduledFirst)[0];
    if (isPodReady(pod)) {
      c.numberReady++;
      if (isPodAvailable(pod, minReady(ds), nowMs)) c.numberAvailable++;
    }
    if (isPodUpdated(pod, hash, ds)) c.updatedNumberScheduled++;
  }
  c.numberUnavailable = c.desiredNumberScheduled - c.numberAvailable;
  return c;
}
