/**
 * The events the agent records about its Node, as upstream's kubelet: "Starting kubelet." at
 * start; on every posted status, one event per owned condition whose status changed from what the
 * server had (NodeHasSufficientMemory / NodeHasInsufficientMemory, NodeHasNoDiskPressure /
 * NodeHasDiskPressure, NodeHasSufficientPID / NodeHasInsufficientPID, NodeReady / NodeNotReady:
 * "Node <name> status is now: <reason>"), and Rebooted when the boot id differs from the one the
 * server has; NodeSchedulable / NodeNotSchedulable when spec.unschedulable changes from what the
 * agent saw last (false at start, as upstream). The reference is upstream's nodeRef: kind Node,
 * the node's name, and the name as uid too (kubectl describe node looks for both uids).
 */
import type { EventObjectRef, EventRecorder } from '../../common/events/recorder';
import { isObject } from '../../apiserver/api/types';
import { findCondition, type DesiredNodeStatus } from './node-status';

/** Condition type → its status → upstream's event reason. */
const REASONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  MemoryPressure: { True: 'NodeHasInsufficientMemory', False: 'NodeHasSufficientMemory' },
  DiskPressure: { True: 'NodeHasDiskPressure', False: 'NodeHasNoDiskPressure' },
  PIDPressure: { True: 'NodeHasInsufficientPID', False: 'NodeHasSufficientPID' },
  Ready: { True: 'NodeReady', False: 'NodeNotReady', Unknown: 'NodeNotReady' },
};

export class NodeEvents {
  private lastUnschedulable = false;
  readonly ref: EventObjectRef;

  constructor(
    private readonly recorder: EventRecorder,
    private readonly nodeName: string,
  ) {
    this.ref = { kind: 'Node', name: nodeName, uid: nodeName };
  }

  /** The agent has started (upstream's StartingKubelet). */
  starting(): void {
    this.recorder.event(this.ref, 'Normal', 'Starting', 'Starting kubelet.');
  }

  /** A status was posted over `current` (the server's status before; undefined for a new Node). */
  statusPosted(current: unknown, desired: DesiredNodeStatus): void {
    const bootID = isObject(current) && isObject(current['nodeInfo']) ? current['nodeInfo']['bootID'] : undefined;
    if (typeof bootID === 'string' && bootID !== '' && bootID !== desired.nodeInfo.bootID) {
      this.recorder.event(this.ref, 'Warning', 'Rebooted', `Node ${this.nodeName} has been rebooted, boot id: ${desired.nodeInfo.bootID}`);
    }
    for (const d of desired.conditions) {
      const reason = REASONS[d.type]?.[d.status];
      if (!reason || findCondition(current, d.type)?.status === d.status) continue;
      this.recorder.event(this.ref, 'Normal', reason, `Node ${this.nodeName} status is now: ${reason}`);
    }
  }

  /** The Node as last read: records a change of spec.unschedulable. */
  specSeen(node: unknown): void {
    const spec = isObject(node) && isObject(node['spec']) ? node['spec'] : {};
    const unschedulable = spec['unschedulable'] === true;
    if (unschedulable === this.lastUnschedulable) return;
    this.lastUnschedulable = unschedulable;
    const reason = unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable';
    this.recorder.event(this.ref, 'Normal', reason, `Node ${this.nodeName} status is now: ${reason}`);
  }
}
