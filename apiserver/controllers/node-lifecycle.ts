import { setTimeout as sleepFor } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ApiError, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { canonicalKey } from '../api/group-names';
import { NODE_LEASE_NAMESPACE, TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE } from '../api/well-known';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { rfc3339 } from '../api/time';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';
import { markPodsNotReady } from './mark-pods-not-ready';

/** The conditions upstream's node lifecycle controller sets to Unknown when a node goes silent. */
const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/** Upstream TaintNodesByCondition: condition type → status → NoSchedule taint key. */
const NO_SCHEDULE_BY_CONDITION: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: 'node.svc.io/memory-pressure' },
  DiskPressure: { True: 'node.svc.io/disk-pressure' },
  PIDPressure: { True: 'node.svc.io/pid-pressure' },
  NetworkUnavailable: { True: 'node.svc.io/network-unavailable' },
};

/** Every key/effect pair this controller adds and removes; other taints are never touched. */
const MANAGED = new Set<string>([
  `${TAINT_UNREACHABLE}:NoExecute`,
  `${TAINT_NOT_READY}:NoExecute`,
  `${TAINT_UNSCHEDULABLE}:NoSchedule`,
  ...Object.values(NO_SCHEDULE_BY_CONDITION).flatMap((m) => Object.values(m).map((k) => `${k}:NoSchedule`)),
]);

const ctx = controllerContext('node-lifecycle-controller');
const statusCtx = { ...ctx, subresource: 'status' };
const everything = { labelSelector: [], fieldSelector: [] };

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period: how long a node may stay silent before its conditions go Unknown (default 50 s). */
  gracePeriodMs: number;
  /** How often every node is checked (upstream --node-monitor-period, 5 s); default min(5 s, grace/5). */
  monitorPeriodMs?: number;
  now: () => Date;
  log: Logger;
  /** Waits between passes; resolves early or rejects when the signal aborts. Default timers/promises setTimeout. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
  /** Where its events go (reporting component node-controller, as upstream's); default none. */
  recorder?: EventRecorder;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** What the controller last saw of a node's signs of life, and when (on its own clock). */
interface Health {
  /** The Node's uid, for the events about it. */
  uid?: string;
  heartbeat?: string;
  renewMs?: number;
  /** Controller time (ms) at which the node was last heard: a new heartbeat or lease renewal observed. */
  probeMs: number;
}

/**
 * The node lifecycle controller (spec 3, 8; upstream pkg/controller/nodelifecycle):
 *
 * - Health: a node is heard when the controller observes its Lease (svc-node-lease/<node>)
 *   spec.renewTime advance or its Ready condition's lastHeartbeatTime change. As upstream, "when"
 *   is the controller's own clock at observation (probeTimestamp), so an agent whose clock is off
 *   is judged by whether it keeps renewing, not by the times it writes; a node first seen (also
 *   after a server restart) gets a full grace period. Silent longer than the grace period → Ready,
 *   MemoryPressure, DiskPressure, PIDPressure become Unknown (reason NodeStatusUnknown) through
 *   the status sub-resource; missing ones are added (NodeStatusNeverUpdated).
 * - Taints: Ready Unknown → node.svc.io/unreachable, Ready False → node.svc.io/not-ready, each with
 *   NoExecute (upstream's taint-based eviction, added when the state is observed; Unknown itself
 *   only arises after a grace period of silence) and NoSchedule (upstream TaintNodesByCondition,
 *   which also maps pressure conditions and spec.unschedulable); Ready True removes them.
 *
 * Every node is checked each monitor period, from the informers' caches of nodes and Leases (as
 * upstream reads its listers); Node events re-check that node's taints at once so recovery is
 * prompt. Lease events need no reaction: a renewal never changes what is stored.
 */
export class NodeLifecycleController {
  private readonly health = new Map<string, Health>();
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: NodeLifecycleOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Monitors until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const period = this.opts.monitorPeriodMs ?? Math.max(100, Math.min(5000, Math.floor(this.opts.gracePeriodMs / 5)));
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    const nodes = this.informers.informer(this.type('', 'v1', 'nodes'));
    const leases = this.informers.informer(this.type('coordination.svc.io', 'v1', 'leases'), { namespace: NODE_LEASE_NAMESPACE });
    const queue = new WorkQueue();
    const onNode = (node: KObject) => {
      if (!sameManagedTaints(node, this.opts.now().getTime())) queue.add(node.metadata.name!);
    };
    nodes.addEventHandler({ onAdd: onNode, onUpdate: (_old, node) => onNode(node), onDelete: (node) => this.forget(node.metadata.name!) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, nodes, leases))) return;
    const work = runWorkers(queue, (name) => this.syncTaints(name), signal, { onError: (name, err) => this.opts.log.warn({ err, node: name }, 'node taint update failed; retrying') });
    while (!signal.aborted) {
      try {
        await this.monitorNodes(nodes.store.list(), leases.store.list());
      } catch (err) {
        this.opts.log.error({ err }, 'node monitor pass failed');
      }
      try {
        await sleep(period, signal);
      } catch {
        break; // aborted
      }
    }
    await work;
  }

  /** One pass over every node as the store has it now: updates health, marks silent nodes Unknown, reconciles taints. */
  async monitor(): Promise<void> {
    const nodes = (await this.store.list(this.type('', 'v1', 'nodes'), '', everything)).items;
    const leases = (await this.store.list(this.type('coordination.svc.io', 'v1', 'leases'), NODE_LEASE_NAMESPACE, everything)).items;
    await this.monitorNodes(nodes, leases);
  }

  private async monitorNodes(nodes: readonly KObject[], leases: readonly KObject[]): Promise<void> {
    const nodeType = this.type('', 'v1', 'nodes');
    const renewals = new Map<string, number>();
    for (const l of leases) {
      const renew = parseTime((l.spec as { renewTime?: unknown } | undefined)?.renewTime);
      if (renew !== undefined) renewals.set(l.metadata.name!, renew);
    }
    const seen = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata.name!;
      seen.add(name);
      try {
        await this.check(nodeType, node, renewals.get(name));
      } catch (err) {
        if (isNotFound(err)) continue;
        this.opts.log.warn({ err, node: name }, 'node health update failed');
      }
    }
    for (const name of [...this.health.keys()]) if (!seen.has(name)) this.forget(name);
  }

  /** A node that went: upstream's RemovingNode event, once. */
  private forget(name: string): void {
    const h = this.health.get(name);
    if (!h) return;
    this.health.delete(name);
    this.nodeEvent(name, h.uid, 'RemovingNode', `Removing Node ${name} from Controller`);
  }

  /** Upstream RecordNodeEvent: Normal, about the Node, "Node <name> event: <what>". */
  private nodeEvent(name: string, uid: string | undefined, reason: string, what: string): void {
    this.recorder.event({ apiVersion: 'v1', kind: 'Node', name, ...(uid ? { uid } : {}) }, 'Normal', reason, `Node ${name} event: ${what}`);
  }

  private get recorder(): EventRecorder {
    return this.opts.recorder ?? NOOP_RECORDER;
  }

  private async check(nodeType: ResourceType, node: KObject, renewMs: number | undefined): Promise<void> {
    const name = node.metadata.name!;
    const now = this.opts.now().getTime();
    const heartbeat = condition(node, 'Ready')?.lastHeartbeatTime;
    let h = this.health.get(name);
    if (!h) {
      h = { uid: node.metadata.uid, heartbeat, renewMs, probeMs: now };
      this.health.set(name, h);
      // Upstream's monitorNodeHealth, for every node it sees first (each start of the controller too).
      this.nodeEvent(name, h.uid, 'RegisteredNode', `Registered Node ${name} in Controller`);
    } else {
      if (heartbeat !== h.heartbeat) {
        h.heartbeat = heartbeat;
        h.probeMs = now;
      }
      if (renewMs !== undefined && (h.renewMs === undefined || renewMs > h.renewMs)) {
        h.renewMs = renewMs;
        h.probeMs = now;
      }
    }
    let current = node;
    if (now - h.probeMs > this.opts.gracePeriodMs && needsUnknown(node)) {
      const silentFor = now - h.probeMs;
      const { object } = await this.store.update(
        nodeType,
        '',
        name,
        (fresh) => {
          // The node posted status since we looked: it is alive, leave it alone.
          if (!fresh || condition(fresh, 'Ready')?.lastHeartbeatTime !== heartbeat) return fresh ?? node;
          markUnknown(fresh, rfc3339(new Date(now)));
          return fresh;
        },
        statusCtx,
      );
      current = object;
      if (!needsUnknown(current)) this.opts.log.info({ node: name, silentForMs: silentFor }, 'node stopped posting status; conditions set to Unknown');
      if (condition(node, 'Ready')?.status === 'True' && condition(current, 'Ready')?.status !== 'True') await this.readyLost(current);
    }
    if (!sameManagedTaints(current, now)) await this.syncTaints(name);
  }

  /** Ready went from True to Unknown on our write: upstream's RecordNodeStatusChange and MarkPodsNotReady. */
  private async readyLost(node: KObject): Promise<void> {
    const name = node.metadata.name!;
    this.recorder.event({ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    const errors = await markPodsNotReady(this.store, this.type('', 'v1', 'pods'), name, { ctx, now: this.opts.now, recorder: this.recorder });
    for (const err of errors) this.opts.log.warn({ err, node: name }, 'marking a pod of an unresponsive node not ready failed');
  }

  /** Brings the node's controller-owned taints in line with its conditions. */
  private async syncTaints(name: string): Promise<void> {
    const nodeType = this.type('', 'v1', 'nodes');
    try {
      await this.store.update(
        nodeType,
        '',
        name,
        (fresh) => {
          if (!fresh) throw new ApiError('NotFound', `node "${name}" not found`);
          const next = reconcileTaints(fresh, this.opts.now().getTime());
          if (isObject(fresh.spec)) {
            if (next.length === 0) delete fresh.spec.taints;
            else fresh.spec.taints = next;
          } else if (next.length > 0) fresh.spec = { taints: next };
          return fresh;
        },
        ctx,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  private type(group: string, version: string, resource: string): ResourceType {
    const t = this.types.lookup(group, version, resource);
    if (!t) throw new Error(`${resource}.${group || 'core'} type not registered`);
    return t;
  }
}

function conditions(node: KObject): NodeCondition[] {
  const status = node.status as { conditions?: unknown } | undefined;
  return Array.isArray(status?.conditions) ? (status.conditions as NodeCondition[]).filter(isObject) : [];
}

function condition(node: KObject, type: string): NodeCondition | undefined {
  return conditions(node).find((c) => c.type === type);
}

function needsUnknown(node: KObject): boolean {
  return MONITORED_CONDITIONS.some((t) => condition(node, t)?.status !== 'Unknown');
}

/** Upstream tryUpdateNodeHealth's "stopped posting" branch: heartbeats keep the node's own times. */
function markUnknown(node: KObject, now: string): void {
  const status = (isObject(node.status) ? node.status : (node.status = {})) as { conditions?: NodeCondition[] };
  const list = Array.isArray(status.conditions) ? status.conditions : (status.conditions = []);
  for (const type of MONITORED_CONDITIONS) {
    const c = list.find((x) => isObject(x) && x.type === type);
    if (!c) {
      list.push({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'svc-node never posted node status.',
        lastHeartbeatTime: node.metadata.creationTimestamp,
        lastTransitionTime: now,
      });
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = 'NodeStatusUnknown';
      c.message = 'svc-node stopped posting node status.';
      c.lastTransitionTime = now;
    }
  }
}

/** The taints a node should carry from this controller, given its conditions. */
export function desiredTaints(node: KObject): Array<{ key: string; effect: string }> {
  const out: Array<{ key: string; effect: string }> = [];
  const ready = condition(node, 'Ready')?.status;
  if (ready === 'Unknown') out.push({ key: TAINT_UNREACHABLE, effect: 'NoExecute' });
  if (ready === 'False') out.push({ key: TAINT_NOT_READY, effect: 'NoExecute' });
  for (const c of conditions(node)) {
    const key = NO_SCHEDULE_BY_CONDITION[c.type]?.[c.status];
    if (key) out.push({ key, effect: 'NoSchedule' });
  }
  if ((node.spec as { unschedulable?: unknown } | undefined)?.unschedulable === true) out.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return out;
}

/**
 * The node's taint list with the controller-owned ones made to match desiredTaints: others kept
 * in place, wanted ones kept as they are (with their timeAdded), missing ones appended (NoExecute
 * with timeAdded, as upstream), unwanted ones dropped. The controller sets the svc.io keys; a taint
 * under upstream's spelling (node.kubernetes.io/not-ready, written by a tool or a manifest) is the
 * same taint (issue 17): kept when wanted, instead of a second one, and dropped when not.
 */
export function reconcileTaints(node: KObject, nowMs: number): Taint[] {
  const existing = ((node.spec as { taints?: unknown } | undefined)?.taints ?? []) as Taint[];
  const want = desiredTaints(node);
  const id = (t: Taint) => `${typeof t.key === 'string' ? canonicalKey(t.key) : String(t.key)}:${t.effect}`;
  const wanted = new Set(want.map(id));
  const kept = (Array.isArray(existing) ? existing : []).filter((t) => !MANAGED.has(id(t)) || wanted.has(id(t)));
  const have = new Set(kept.map(id));
  for (const t of want) {
    if (have.has(id(t))) continue;
    kept.push(t.effect === 'NoExecute' ? { ...t, timeAdded: rfc3339(new Date(nowMs)) } : { ...t });
  }
  return kept;
}

function sameManagedTaints(node: KObject, nowMs: number): boolean {
  const existing = (node.spec as { taints?: unknown } | undefined)?.taints ?? [];
  return isDeepStrictEqual(reconcileTaints(node, nowMs), existing);
}

function parseTime(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}
