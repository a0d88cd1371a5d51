/**
 * Labels and annotations the agent puts on sandboxes and containers, with upstream's names
 * (kuberuntime labels.go), so crictl and runtimes that read them (containerd's CRI plugin shows the
 * pod and container names from them) see what they would under the kubelet. The agent finds its
 * pods in the runtime by these labels and nothing else.
 */
import { createHash } from 'node:crypto';
import type { StringMap } from '../cri';
import type { Container, Pod } from '../api/core-v1';

export const POD_NAME = 'io.kubernetes.pod.name';
export const POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const POD_UID = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME = 'io.kubernetes.container.name';
/** Marks sandboxes and containers created by svc-node (the kubelet uses io.kubernetes.container.name=POD on sandboxes). */
export const MANAGED_BY = 'svc.io/managed-by';
export const MANAGER = 'svc-node';

export const CONTAINER_HASH = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT = 'io.kubernetes.container.restartCount';
export const TERMINATION_GRACE = 'io.kubernetes.pod.terminationGracePeriod';
export const CONTAINER_TERMINATION_MESSAGE_PATH = 'io.kubernetes.container.terminationMessagePath';
/** Which list of the pod spec the container came from: container, init. */
export const CONTAINER_KIND = 'svc.io/container-kind';

export function sandboxLabels(pod: Pod): StringMap {
  return {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME]: pod.metadata.name ?? '',
    [POD_NAMESPACE]: pod.metadata.namespace ?? 'default',
    [POD_UID]: pod.metadata.uid ?? '',
    [MANAGED_BY]: MANAGER,
  };
}

export function sandboxAnnotations(pod: Pod): StringMap {
  return { ...(pod.metadata.annotations ?? {}) };
}

export function containerLabels(pod: Pod, c: Container): StringMap {
  return {
    [POD_NAME]: pod.metadata.name ?? '',
    [POD_NAMESPACE]: pod.metadata.namespace ?? 'default',
    [POD_UID]: pod.metadata.uid ?? '',
    [CONTAINER_NAME]: c.name,
    [MANAGED_BY]: MANAGER,
  };
}

export function containerAnnotations(pod: Pod, c: Container, kind: 'container' | 'init' | 'ephemeral', restartCount: number): StringMap {
  const a: StringMap = {
    [CONTAINER_HASH]: containerHash(c),
    [CONTAINER_RESTART_COUNT]: String(restartCount),
    [CONTAINER_KIND]: kind,
    [CONTAINER_TERMINATION_MESSAGE_PATH]: c.terminationMessagePath ?? '/dev/termination-log',
  };
  if (pod.spec.terminationGracePeriodSeconds !== undefined) a[TERMINATION_GRACE] = String(pod.spec.terminationGracePeriodSeconds);
  return a;
}

/** JSON with object keys sorted, so equal specs hash equally whatever order the server wrote them in. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Hash of a container's spec; a running container whose hash differs from its spec's is restarted (as upstream). */
export function containerHash(c: Container): string {
  return createHash('sha256').update(canonicalJson(c)).digest('hex').slice(0, 16);
}
