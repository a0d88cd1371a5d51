import type { KObject } from '../api/types';
import { podRequests, type Resources } from './resources';
import { podTolerations, type Taint, type Toleration } from './taints';

/** A pod being scheduled, with what the filters and scores need computed once. */
export interface PodInfo {
  pod: KObject;
  /** Exact requests (upstream PodRequests), checked against free allocatable. */
  requests: Resources;
  /** Requests with the 100m / 200Mi defaults for containers without any, used for scoring. */
  nonZero: Resources;
  tolerations: Toleration[];
}

/** A node as the scheduler sees it: the object and what the pods already on it use. */
export interface NodeInfo {
  node: KObject;
  name: string;
  allocatable: Resources;
  taints: Taint[];
  /** Sum of the exact requests of the non-terminal pods bound to the node. */
  requested: Resources;
  /** Sum of their non-zero requests (scoring). */
  nonZeroRequested: Resources;
  /** How many non-terminal pods are bound to it (against allocatable pods). */
  podCount: number;
}

export function podInfo(pod: KObject): PodInfo {
  return { pod, requests: podRequests(pod), nonZero: podRequests(pod, true), tolerations: podTolerations(pod) };
}
