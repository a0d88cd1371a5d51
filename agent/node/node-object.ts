/** The Node object the agent registers (metadata, spec and its first status). */
import type { KObject } from '../../apiserver/api/types';
import { ARCH_LABEL, OS_LABEL, wellKnownNodeLabels } from '../../apiserver/api/well-known';
import type { Taint } from '../config/types';
import type { MachineInfo } from '../platform/machine';
import { initialStatus, type DesiredNodeStatus } from './node-status';

export const archLabel = ARCH_LABEL;
export const osLabel = OS_LABEL;

export interface NodeIdentity {
  name: string;
  /** Default labels plus --node-labels. */
  labels: Record<string, string>;
  /** registerWithTaints: applied when the Node is created, never reconciled (as the kubelet). */
  taints: readonly Taint[];
  providerID?: string;
}

/**
 * The default labels (Appendix D) with --node-labels on top; a --node-labels key may not override
 * a default. Each well-known label is set in both spellings, svc.io and upstream's kubernetes.io
 * (svc.io/os and kubernetes.io/os, ...), so stock manifests' nodeSelectors match (issue 17).
 */
export function nodeLabels(nodeName: string, machine: Pick<MachineInfo, 'architecture' | 'operatingSystem'>, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, ...wellKnownNodeLabels(nodeName, machine.operatingSystem, machine.architecture) };
}

/** A new Node with the given status (all condition times = now). */
export function newNodeObject(id: NodeIdentity, status: DesiredNodeStatus, nowIso: string): KObject {
  const spec: Record<string, unknown> = {};
  if (id.taints.length > 0) spec['taints'] = id.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
  if (id.providerID) spec['providerID'] = id.providerID;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: id.name, labels: { ...id.labels } },
    spec,
    status: initialStatus(status, nowIso),
  };
}
