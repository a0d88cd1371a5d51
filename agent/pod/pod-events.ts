/**
 * The references and messages of the events the agent records about pods, as upstream's kubelet
 * words them (pkg/kubelet/events reasons; messages of images/image_manager.go,
 * kuberuntime_container.go, prober.go): a pod's reference, and a container's with upstream's
 * fieldPath (spec.containers{name}, spec.initContainers{name}, spec.ephemeralContainers{name}).
 */
import { referenceTo } from '../../common/events/object-ref';
import type { EventObjectRef } from '../../common/events/recorder';
import type { Pod } from '../api/core-v1';

/** The pod itself (upstream ref.GetReference of the pod). */
export function podRef(pod: Pod): EventObjectRef {
  return referenceTo(pod, { kind: 'Pod', apiVersion: 'v1' });
}

/** Upstream kubecontainer.GenerateContainerRef: the pod with the container's fieldPath (none for a container not in the spec). */
export function containerRef(pod: Pod, name: string): EventObjectRef {
  const spec = pod.spec;
  let fieldPath: string | undefined;
  if (spec.containers.some((c) => c.name === name)) fieldPath = `spec.containers{${name}}`;
  else if ((spec.initContainers ?? []).some((c) => c.name === name)) fieldPath = `spec.initContainers{${name}}`;
  else if ((spec.ephemeralContainers ?? []).some((c) => c.name === name)) fieldPath = `spec.ephemeralContainers{${name}}`;
  return referenceTo(pod, { kind: 'Pod', apiVersion: 'v1', ...(fieldPath ? { fieldPath } : {}) });
}

/**
 * A duration as Go's time.Duration prints one truncated to milliseconds ("523ms", "1.234s",
 * "2m3.5s", "1h0m0s"), for upstream's "Successfully pulled image ... in 1.234s" message.
 */
export function goMillis(ms: number): string {
  const t = Math.max(0, Math.floor(ms));
  if (t === 0) return '0s';
  if (t < 1000) return `${t}ms`;
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const secs = (t % 60_000) / 1000;
  const s = `${Number(secs.toFixed(3))}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}

/** "Liveness", "Readiness", "Startup": upstream's probe type names in messages. */
export function probeTypeName(type: 'liveness' | 'readiness' | 'startup'): string {
  return type[0].toUpperCase() + type.slice(1);
}
