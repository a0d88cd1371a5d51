import type { KObject } from '../api/types';
import { sameTaintKey } from '../api/well-known';
import { get, num, recs, str } from '../registry/obj-access';

/** core/v1 Taint as read from node.spec.taints. */
export interface Taint {
  key: string;
  value: string;
  effect: string;
  timeAdded?: string;
}

/** core/v1 Toleration as read from pod.spec.tolerations; operator '' means Equal. */
export interface Toleration {
  key: string;
  operator: string;
  value: string;
  effect: string;
  tolerationSeconds?: number;
}

export function nodeTaints(node: KObject): Taint[] {
  return recs(get(node, 'spec', 'taints')).map((t) => ({
    key: str(t.key) ?? '',
    value: str(t.value) ?? '',
    effect: str(t.effect) ?? '',
    timeAdded: str(t.timeAdded),
  }));
}

export function podTolerations(pod: KObject): Toleration[] {
  return recs(get(pod, 'spec', 'tolerations')).map((t) => ({
    key: str(t.key) ?? '',
    operator: str(t.operator) ?? '',
    value: str(t.value) ?? '',
    effect: str(t.effect) ?? '',
    tolerationSeconds: num(t.tolerationSeconds),
  }));
}

/**
 * Upstream Toleration.ToleratesTaint: an empty effect matches every effect, an empty key (with
 * Exists) every key; Exists ignores the value, Equal (or '') compares it. A key matches in either
 * spelling (issue 17): a toleration of node.kubernetes.io/not-ready, as upstream manifests write
 * it, tolerates the node.svc.io/not-ready taint the node lifecycle controller sets, and the reverse.
 * The scheduler's filters and scores and the taint eviction controller all ask this function.
 */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== '' && !sameTaintKey(t.key, taint.key)) return false;
  if (t.operator === 'Exists') return true;
  if (t.operator === '' || t.operator === 'Equal') return t.value === taint.value;
  return false;
}

/** True when some toleration tolerates the taint. */
export function toleratedBy(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => tolerates(t, taint));
}

/** Upstream FindMatchingUntoleratedTaint: the first taint with one of the effects that no toleration tolerates. */
export function firstUntolerated(taints: readonly Taint[], tolerations: readonly Toleration[], effects: readonly string[]): Taint | undefined {
  return taints.find((taint) => effects.includes(taint.effect) && !toleratedBy(tolerations, taint));
}

/** Upstream's TaintToleration filter reason, e.g. "node(s) had untolerated taint {dedicated: gpu}". */
export function untoleratedTaintReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value}}`;
}
