/**
 * svc-node's pod network (issue 24 item 5), one loop (a work queue with one worker) over one
 * Node informer:
 * - its own Node: the bridge CNI config for its podCIDRs (cni-config-writer.ts), written once the
 *   API server's node IPAM has given it a podCIDR, rewritten when that changes;
 * - every other Node (routes on): host-gateway routes to their podCIDRs through their InternalIP
 *   (routes.ts), added with `ip route replace`, deleted when the Node goes away or its routes
 *   change.
 * With routes on, the informer lists and watches every Node (the Node authorizer lets a node's
 * own identity read only its own Node: it needs a grant, see docs); with routes off, only its own
 * Node (a metadata.name field selector). One informer, not two: each watch holds one of the API
 * client's few connections for its whole life.
 * On start, routes of ours (route-table.ts's marker) that no Node wants any more are deleted; on
 * a clean shutdown every route it added and its CNI config are removed.
 * Either half may be off (undefined): a cluster with its own CNI, routes made by someone else.
 */
import type { KObject } from '../../apiserver/api/types';
import { Informer } from '../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import type { ApiClient } from '../client/api-client';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
import { nodesResource } from '../client/resources';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { CniConfigWriter } from './cni-config-writer';
import type { RouteTable } from './route-table';
import { nodeInternalIPs, nodePodCIDRs, routesToNode, sameRoutes, type HostRoute } from './routes';

export interface PodNetworkOptions {
  client: ApiClient;
  nodeName: string;
  /** This node's own addresses (no route is made through them). */
  selfIPs: () => string[];
  /** Writes the CNI config; undefined: never written. */
  cni?: CniConfigWriter;
  /** The routing table; undefined: no routes managed. */
  routes?: RouteTable;
  clock: Clock;
  log: Log;
  /** How often its own Node's CNI config is checked again without a change (default 1 min). */
  resyncPeriodMs?: number;
  /** Shortest server-side lifetime of each watch (default 5 min). */
  watchTimeoutSeconds?: number;
}

/** What the loop keeps of a Node: its name, podCIDRs and addresses (the informer's transform). */
function slim(node: KObject): KObject {
  const spec = node['spec'] as { podCIDR?: unknown; podCIDRs?: unknown } | undefined;
  const status = node['status'] as { addresses?: unknown } | undefined;
  return {
    metadata: { name: node.metadata.name, resourceVersion: node.metadata.resourceVersion, uid: node.metadata.uid, deletionTimestamp: node.metadata.deletionTimestamp },
    spec: { podCIDR: spec?.podCIDR, podCIDRs: spec?.podCIDRs },
    status: { addresses: status?.addresses },
  };
}

/** Queue keys that are not node names (a node name never holds a NUL). */
const CNI_KEY = '\0cni-config';
const SWEEP_KEY = '\0sweep-routes';

const networkView = (n: KObject) => JSON.stringify([nodePodCIDRs(n), nodeInternalIPs(n), n.metadata.deletionTimestamp ?? null]);

export class PodNetwork {
  /** Every Node (routes on), or only its own (a field selector on its name). */
  private readonly nodes: Informer<KObject>;
  /** One worker: CNI config, routes and the start-up sweep never run at once. */
  private readonly queue: WorkQueue;
  /** Routes added, by the node they lead to. */
  private readonly installed = new Map<string, HostRoute[]>();
  /** Nodes whose routes in `installed` were all written. */
  private readonly applied = new Set<string>();
  /** Names of the Nodes the route informer holds (it has no list of its own). */
  private readonly known = new Set<string>();
  private lastCniOutcome = '';

  constructor(private readonly o: PodNetworkOptions) {
    const clock = timersFromSleep(o.clock);
    const informer = (name: string, fieldSelector?: string) =>
      new Informer<KObject>(apiListWatch<KObject>(o.client, nodesResource, { fieldSelector }), { name, clock, log: o.log, transform: slim, minWatchTimeoutMs: (o.watchTimeoutSeconds ?? 300) * 1000, resumeAfterCleanEnd: true });
    this.queue = new WorkQueue({ clock });
    this.nodes = informer(o.routes ? 'pod-network-nodes' : 'pod-network-own-node', o.routes ? undefined : `metadata.name=${o.nodeName}`);
    const enqueue = (n: KObject, present: boolean) => {
      const name = n.metadata.name ?? '';
      if (name === o.nodeName) return this.queue.add(CNI_KEY);
      if (present) this.known.add(name);
      else this.known.delete(name);
      this.queue.add(name);
    };
    const add = (n: KObject) => enqueue(n, true);
    this.nodes.addEventHandler(
      {
        onAdd: add,
        onUpdate: (old, n) => {
          // At each resync (old === n) its own Node again: a cluster CNI config that appeared or
          // went away since is noticed within a resync period.
          if (networkView(old) !== networkView(n) || (old === n && n.metadata.name === o.nodeName)) add(n);
        },
        onDelete: (n) => enqueue(n, false),
      },
      { resyncPeriodMs: o.resyncPeriodMs ?? 60_000 },
    );
  }

  /** Follows the Nodes until the signal aborts, then removes its routes and CNI config. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const informer = this.nodes.run(signal);
    // The sweep of an earlier run's routes waits for the first full list of Nodes (it must know
    // every route still wanted).
    if (this.o.routes) void this.nodes.whenSynced(signal).then((synced) => synced && this.queue.add(SWEEP_KEY));
    await runWorkers(this.queue, (key) => this.reconcile(key), signal, {
      onError: (key, err) => this.o.log.warn({ err, key }, 'pod network: reconciling failed; retrying'),
    });
    await informer;
    await this.cleanUp();
  }

  /** One queue key: the CNI config, the start-up sweep, or the routes toward one node. */
  async reconcile(key: string): Promise<void> {
    if (key === CNI_KEY) return this.syncCniConfig(this.nodes.get(this.o.nodeName));
    if (key === SWEEP_KEY) return this.dropStaleRoutes();
    const routes = this.o.routes;
    if (!routes || key === this.o.nodeName) return;
    const name = key;
    const node = this.nodes.get(name);
    const want = node ? routesToNode(node, { name: this.o.nodeName, ips: this.o.selfIPs() }) : [];
    const have = this.installed.get(name) ?? [];
    if (sameRoutes(want, have) && (this.applied.has(name) || want.length === 0)) return;
    this.applied.delete(name);
    for (const r of have) if (!want.some((w) => w.dst === r.dst)) await routes.delete(r.dst);
    // Recorded before the writes: a failure half-way still has them deleted later (the node is
    // not marked applied, so the retry writes them again).
    this.installed.set(name, want);
    for (const r of want) await routes.replace(r);
    if (want.length === 0) this.installed.delete(name);
    else this.applied.add(name);
    this.o.log.info({ node: name, routes: want }, 'pod network: routes to node set');
  }

  private async syncCniConfig(node: KObject | undefined): Promise<void> {
    if (!this.o.cni) return;
    const outcome = await this.o.cni.sync(node ? nodePodCIDRs(node) : []);
    const text = JSON.stringify(outcome);
    if (text === this.lastCniOutcome && outcome.kind !== 'written') return;
    this.lastCniOutcome = text;
    if (outcome.kind === 'written') this.o.log.info({ file: this.o.cni.file, podCIDRs: node ? nodePodCIDRs(node) : [] }, 'pod network: CNI config written');
    else if (outcome.kind === 'foreign') this.o.log.info({ files: outcome.files, removedOurs: outcome.removedOurs }, 'pod network: the CNI config directory has a config of its own; leaving it alone');
    else if (outcome.kind === 'waiting') this.o.log.info({ node: this.o.nodeName }, 'pod network: waiting for the Node to get a podCIDR');
  }

  /** Deletes routes of ours (from an earlier run) that lead to no current Node's podCIDR. */
  private async dropStaleRoutes(): Promise<void> {
    const routes = this.o.routes;
    if (!routes) return;
    const wanted = new Set<string>();
    for (const name of this.known) {
      const node = this.nodes.get(name);
      if (node) for (const r of routesToNode(node, { name: this.o.nodeName, ips: this.o.selfIPs() })) wanted.add(r.dst);
    }
    for (const r of await routes.list()) {
      if (wanted.has(r.dst)) continue;
      await routes.delete(r.dst);
      this.o.log.info({ route: r }, 'pod network: removed a stale route of an earlier run');
    }
  }

  /** On shutdown: every route added and our CNI config go. Never rejects. */
  private async cleanUp(): Promise<void> {
    for (const [name, rs] of this.installed) {
      for (const r of rs) await this.o.routes?.delete(r.dst).catch((err: unknown) => this.o.log.warn({ err, node: name, route: r }, 'pod network: cannot delete a route at shutdown'));
    }
    this.installed.clear();
    this.applied.clear();
    const removed = await this.o.cni?.remove().catch((err: unknown) => {
      this.o.log.warn({ err }, 'pod network: cannot remove the CNI config at shutdown');
      return false;
    });
    this.o.log.info({ removedCniConfig: removed === true }, 'pod network: routes and CNI config removed');
  }
}
