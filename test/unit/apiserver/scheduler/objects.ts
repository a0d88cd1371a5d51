/** Pod and Node builders for the scheduler tests. */
import type { KObject } from '../../../../apiserver/api/types';
import type { NodeInfo } from '../../../../apiserver/scheduler/node-info';
import { nodeAllocatable } from '../../../../apiserver/scheduler/resources';
import { nodeTaints } from '../../../../apiserver/scheduler/taints';

export interface PodOpts {
  requests?: Record<string, string>;
  init?: Array<{ requests?: Record<string, string>; restartPolicy?: string }>;
  spec?: Record<string, unknown>;
  ns?: string;
}

export function pod(name: string, o: PodOpts = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.ns ?? 'default', uid: `uid-${name}` },
    spec: {
      containers: [{ name: 'c', image: 'busybox', resources: o.requests ? { requests: o.requests } : {} }],
      ...(o.init ? { initContainers: o.init.map((c, i) => ({ name: `i${i}`, image: 'busybox', resources: c.requests ? { requests: c.requests } : {}, ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}) })) } : {}),
      ...(o.spec ?? {}),
    },
  };
}

export interface NodeOpts {
  allocatable?: Record<string, string>;
  labels?: Record<string, string>;
  taints?: Array<{ key: string; value?: string; effect: string }>;
  unschedulable?: boolean;
  ready?: string;
}

export const DEFAULT_ALLOCATABLE = { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' };

export function node(name: string, o: NodeOpts = {}): KObject {
  const spec: Record<string, unknown> = {};
  if (o.taints) spec.taints = o.taints;
  if (o.unschedulable) spec.unschedulable = true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'svc.io/hostname': name, ...(o.labels ?? {}) } },
    spec,
    status: {
      allocatable: o.allocatable ?? DEFAULT_ALLOCATABLE,
      capacity: o.allocatable ?? DEFAULT_ALLOCATABLE,
      conditions: [{ type: 'Ready', status: o.ready ?? 'True', reason: 'SvcNodeReady' }],
    },
  };
}

/** A NodeInfo with the given usage already on the node. */
export function info(n: KObject, used: { requested?: Record<string, number>; nonZero?: Record<string, number>; pods?: number } = {}): NodeInfo {
  return {
    node: n,
    name: n.metadata.name!,
    allocatable: nodeAllocatable(n),
    taints: nodeTaints(n),
    requested: used.requested ?? {},
    nonZeroRequested: used.nonZero ?? used.requested ?? {},
    podCount: used.pods ?? 0,
  };
}
