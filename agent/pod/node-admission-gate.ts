/**
 * The gate an API pod passes before it gets a worker (upstream: the kubelet's admit handlers in
 * front of HandlePodAdditions): the pure checks of ./admission against the node as last read from
 * the API server (labels, taints, allocatable; refreshed by the pod manager's periodic loop), and
 * the set of pods it refused, which are never looked at again until they leave the source.
 */
import type { ApiClient } from '../client/api-client';
import { nodesResource } from '../client/resources';
import { parseQuantity } from '../config/quantity';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { admitPod, type AdmissionNode } from './admission';
import { podDesc } from './pod-sync';
import type { Pod, PodStatus } from '../api/core-v1';

export interface NodeAdmissionGateOptions {
  client: ApiClient;
  clock: Clock;
  log: Log;
  nodeName: string;
  nodeCpuMilli: number;
  nodeMemoryBytes: number;
  /** Allocatable pods until the Node object has been read (default 110, the kubelet's maxPods). */
  maxPods?: number;
  /** The pods already admitted that still count against the node (with a worker, not terminal). */
  admitted: () => Pod[];
  /** Records the status a refused pod gets (phase Failed with admission's reason). Must not throw. */
  onReject: (pod: Pod, status: PodStatus) => void;
}

export class NodeAdmissionGate {
  /** API pods node admission refused (they never get a worker). */
  private readonly rejected = new Set<string>();
  private node: AdmissionNode | undefined;

  constructor(private readonly o: NodeAdmissionGateOptions) {}

  /**
   * Node-side admission (./admission) of an API pod about to get a worker. A rejected pod gets no
   * worker and its status becomes Failed with the reason; it is not looked at again. Pods already
   * in a terminal phase pass (their worker only winds them down).
   */
  admit(pod: Pod): boolean {
    const uid = pod.metadata.uid ?? '';
    if (this.rejected.has(uid)) return false;
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded' || pod.metadata.deletionTimestamp) return true;
    const admitted = this.o.admitted();
    const r = admitPod(pod, admitted, this.admissionNode());
    if (r.admit) return true;
    this.rejected.add(uid);
    this.o.log.warn({ pod: podDesc(pod), reason: r.reason, message: r.message }, 'pod rejected by node admission');
    const now = new Date(this.o.clock.now()).toISOString();
    this.o.onReject(pod, { ...(pod.status ?? {}), phase: 'Failed', reason: r.reason, message: r.message, startTime: pod.status?.startTime ?? now });
    return false;
  }

  /** Forgets a pod that left its source; true when the gate had refused it. */
  forget(uid: string): boolean {
    return this.rejected.delete(uid);
  }

  /** The node as admission sees it: the last Node object read, else the configured capacity. */
  private admissionNode(): AdmissionNode {
    return (
      this.node ?? {
        name: this.o.nodeName,
        labels: {},
        taints: [],
        allocatable: { cpuMilli: this.o.nodeCpuMilli, memoryBytes: this.o.nodeMemoryBytes, pods: this.o.maxPods ?? 110 },
      }
    );
  }

  /** Reads this node's labels, taints and allocatable for admission. Never rejects. */
  async refreshNode(signal: AbortSignal): Promise<void> {
    try {
      const n = await this.o.client.get(nodesResource, this.o.nodeName, { signal, timeoutMs: 10_000 });
      const alloc = (n as { status?: { allocatable?: Record<string, string> } }).status?.allocatable ?? {};
      const q = (v: string | undefined, dflt: number) => {
        if (v === undefined) return dflt;
        try {
          return parseQuantity(v);
        } catch {
          return dflt;
        }
      };
      const spec = (n as { spec?: { taints?: AdmissionNode['taints'] } }).spec;
      this.node = {
        name: this.o.nodeName,
        labels: n.metadata.labels ?? {},
        taints: spec?.taints ?? [],
        allocatable: {
          cpuMilli: Math.round(q(alloc['cpu'], this.o.nodeCpuMilli / 1000) * 1000),
          memoryBytes: q(alloc['memory'], this.o.nodeMemoryBytes),
          pods: q(alloc['pods'], this.o.maxPods ?? 110),
        },
      };
    } catch (e) {
      if (!signal.aborted) this.o.log.debug({ error: (e as Error).message }, 'cannot read the node for pod admission yet');
    }
  }
}
