import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { get, strs } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { waitForCacheSync, type StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { KeyedRange } from '../store/service-alloc/keyed-range';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('node-ipam-controller');

/** One cluster CIDR's node subnets and how a subnet's name becomes its CIDR text. */
export interface NodeCidrPool {
  range: KeyedRange;
  cidrOf: (name: string) => string;
}

/**
 * Upstream's node IPAM controller (range allocator): each Node without spec.podCIDR gets one
 * subnet of every cluster CIDR (spec.podCIDR = the first, spec.podCIDRs all), allocated as a
 * create-if-absent key per subnet (store/service-alloc/keyed-range.ts), so a subnet is never given
 * twice, even across replicas and restarts; a Node that already has podCIDRs (made before a restart,
 * or set by its creator) has them marked as allocated, a clash reported (CIDRNotAvailable); a
 * deleted Node's subnets are released.
 */
export class NodeIpamController {
  constructor(
    private readonly store: ObjectStore,
    private readonly nodes: ResourceType,
    private readonly pools: readonly NodeCidrPool[],
    private readonly informers: StoreInformers,
    private readonly opts: { log: Logger; recorder?: EventRecorder },
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const inf = this.informers.informer(this.nodes);
    const queue = new WorkQueue();
    inf.addEventHandler(
      {
        onAdd: (n) => queue.add(n.metadata.name!),
        onUpdate: (_o, n) => queue.add(n.metadata.name!),
        onDelete: (n) => void this.release(n).catch((err: unknown) => this.opts.log.warn({ err }, 'releasing a node CIDR failed')),
      },
      { signal },
    );
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, inf))) return;
    await runWorkers(
      queue,
      async (name) => {
        const node = inf.get(name);
        if (node && !node.metadata.deletionTimestamp) await this.sync(node);
      },
      signal,
      { onError: (name, err) => this.opts.log.warn({ err, node: name }, 'allocating the node CIDR failed; retrying') },
    );
  }

  /** Gives the node its podCIDRs, or marks the ones it has as allocated. */
  async sync(node: KObject): Promise<void> {
    const owner = { namespace: '', name: node.metadata.name!, uid: node.metadata.uid };
    const have = strs(get(node, 'spec', 'podCIDRs'));
    if (have.length) {
      for (const cidr of have) {
        const pool = this.pools.find((p) => p.range.spec.offsetOf(cidr.split('/')[0]) !== undefined && p.cidrOf(cidr.split('/')[0]) === cidr);
        if (!pool) continue; // not ours (another range, or set by hand): left alone
        const name = cidr.split('/')[0];
        const held = await pool.range.ownerOf(name);
        if (held?.name === owner.name) continue;
        if ((await pool.range.allocate(name, owner)) === 'taken') this.report(node, `Node ${owner.name} has podCIDR ${cidr}, which is allocated to ${held?.name ?? 'another node'}`);
      }
      return;
    }
    const taken: Array<[NodeCidrPool, string]> = [];
    try {
      for (const pool of this.pools) {
        const name = await pool.range.allocateNext(owner);
        if (name === undefined) {
          this.report(node, `No CIDR available in ${pool.range.spec.describe} for node ${owner.name}`);
          throw new Error(`node CIDR range ${pool.range.spec.describe} is full`);
        }
        taken.push([pool, name]);
      }
      const cidrs = taken.map(([pool, name]) => pool.cidrOf(name));
      await this.store.update(
        this.nodes,
        '',
        owner.name,
        (cur) => {
          if (!cur || cur.metadata.uid !== owner.uid || strs(get(cur, 'spec', 'podCIDRs')).length) throw new Error('node changed; retrying');
          return { ...cur, spec: { ...(cur.spec as object), podCIDR: cidrs[0], podCIDRs: cidrs } };
        },
        ctx,
      );
    } catch (err) {
      for (const [pool, name] of taken) await pool.range.release(name, owner);
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /** Releases a deleted node's subnets (only while they are still its own). */
  async release(node: KObject): Promise<void> {
    const owner = { namespace: '', name: node.metadata.name!, uid: node.metadata.uid };
    for (const cidr of strs(get(node, 'spec', 'podCIDRs'))) {
      const name = cidr.split('/')[0];
      for (const pool of this.pools) if (pool.range.spec.offsetOf(name) !== undefined) await pool.range.release(name, owner);
    }
  }

  private report(node: KObject, message: string): void {
    this.opts.log.warn({ node: node.metadata.name }, message);
    (this.opts.recorder ?? NOOP_RECORDER).event({ kind: 'Node', name: node.metadata.name!, uid: node.metadata.uid }, 'Warning', 'CIDRNotAvailable', message);
  }
}
