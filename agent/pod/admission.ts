/**
 * Node-side pod admission, as upstream's kubelet lifecycle predicate admit handler
 * (pkg/kubelet/lifecycle/predicate.go): a pod bound to this node is checked against what the
 * node has left before a worker starts it; a pod that does not fit is not run, and its status
 * becomes phase Failed with upstream's reason and message:
 *   - resources: the pod count beyond allocatable pods (maxPods) is OutOfpods; CPU and memory
 *     requests beyond allocatable minus what admitted pods request are OutOfcpu / OutOfmemory.
 *     Message "Node didn't have enough resource: <name>, requested: N, used: N, capacity: N".
 *   - nodeSelector and required node affinity against the node's labels: NodeAffinity,
 *     message "Predicate NodeAffinity failed".
 *   - a NoExecute taint the pod does not tolerate (static pods are exempt; NoSchedule is the
 *     scheduler's business): TaintToleration, message "Predicate TaintToleration failed".
 * Differences on purpose: host port conflicts (NodePorts), OS selectors, extended resources and
 * critical-pod preemption are not checked; a pod's requests count the larger of its init
 * containers' and the sum of its app containers' (upstream's effective request), plus the pod
 * overhead its RuntimeClass set (spec.overhead), as upstream's.
 */
import { sameTaintKey } from '../../apiserver/api/well-known';
import { containerRequests } from './resources';
import type { NodeSelectorRequirement, Pod, Toleration } from '../api/core-v1';

/** What admission needs to know about the node. */
export interface AdmissionNode {
  name: string;
  labels: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
  /** Allocatable amounts: CPU in millicores, memory in bytes, the pod count. */
  allocatable: { cpuMilli: number; memoryBytes: number; pods: number };
}

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

/** CPU (millicores) and memory (bytes) a pod requests: the larger of any init container's and the app containers' sum. */
export function podRequests(pod: Pod): { cpuMilli: number; memory: number } {
  let cpu = 0;
  let mem = 0;
  for (const c of pod.spec.containers) {
    const r = containerRequests(c);
    cpu += r.cpuMilli ?? 0;
    mem += r.memory ?? 0;
  }
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerRequests(c);
    cpu = Math.max(cpu, r.cpuMilli ?? 0);
    mem = Math.max(mem, r.memory ?? 0);
  }
  // The overhead as a container's requests would read it (same quantities, same rounding).
  const overhead = pod.spec.overhead ? containerRequests({ name: 'overhead', image: '', resources: { requests: pod.spec.overhead } }) : {};
  return { cpuMilli: cpu + (overhead.cpuMilli ?? 0), memory: mem + (overhead.memory ?? 0) };
}

function insufficient(resource: string, requested: number, used: number, capacity: number): AdmitResult {
  return {
    admit: false,
    reason: `OutOf${resource}`,
    message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const have = Number(value);
      const want = Number(values[0]);
      if (!Number.isInteger(have) || !Number.isInteger(want)) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution (terms ORed, requirements ANDed; an empty term matches nothing). */
export function nodeAffinityMatches(pod: Pod, node: AdmissionNode): boolean {
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) if (node.labels[k] !== v) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined) return true;
  return terms.some((t) => {
    const exprs = t.matchExpressions ?? [];
    const fields = t.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return exprs.every((r) => requirementMatches(r, node.labels[r.key])) && fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.name));
  });
}

/** Upstream ToleratesTaint; a key matches in either spelling (node.kubernetes.io/not-ready is node.svc.io/not-ready), as the API server's scheduler reads it. */
function tolerates(t: Toleration, taint: AdmissionNode['taints'][number]): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  const sameKey = !!t.key && sameTaintKey(t.key, taint.key);
  if (t.operator === 'Exists') return !t.key || sameKey;
  return sameKey && (t.value ?? '') === (taint.value ?? '');
}

/**
 * Whether `pod` may run next to `admitted` (the pods this node already runs, not terminal).
 * `isStatic` exempts static pods from the taint check, as upstream.
 */
export function admitPod(pod: Pod, admitted: readonly Pod[], node: AdmissionNode, isStatic = false): AdmitResult {
  const cap = node.allocatable;
  if (admitted.length + 1 > cap.pods) return insufficient('pods', 1, admitted.length, cap.pods);
  const want = podRequests(pod);
  if (want.cpuMilli > 0 || want.memory > 0) {
    let usedCpu = 0;
    let usedMem = 0;
    for (const p of admitted) {
      const r = podRequests(p);
      usedCpu += r.cpuMilli;
      usedMem += r.memory;
    }
    if (want.cpuMilli > 0 && want.cpuMilli > cap.cpuMilli - usedCpu) return insufficient('cpu', want.cpuMilli, usedCpu, cap.cpuMilli);
    if (want.memory > 0 && want.memory > cap.memoryBytes - usedMem) return insufficient('memory', want.memory, usedMem, cap.memoryBytes);
  }
  if (!nodeAffinityMatches(pod, node)) return { admit: false, reason: 'NodeAffinity', message: 'Predicate NodeAffinity failed' };
  if (!isStatic) {
    const untolerated = node.taints.find((taint) => taint.effect === 'NoExecute' && !(pod.spec.tolerations ?? []).some((t) => tolerates(t, taint)));
    if (untolerated) return { admit: false, reason: 'TaintToleration', message: 'Predicate TaintToleration failed' };
  }
  return { admit: true };
}
