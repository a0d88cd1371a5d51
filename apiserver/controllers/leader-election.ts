import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { rfc3339Micro } from './time';
import { controllerContext } from '../store/system-context';

export interface LeaderElectionOptions {
  /** The Lease's namespace and name (svc-system / svc-controller-manager). */
  namespace: string;
  name: string;
  /** This replica's identity (hostname_uuid, as upstream). */
  identity: string;
  /** How long a non-renewed lease stays valid (upstream default 15 s). */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew before it gives up leading (upstream default 10 s). */
  renewDeadlineMs: number;
  /** Interval between acquire and renew attempts (upstream default 2 s). */
  retryPeriodMs: number;
  now: () => Date;
  log: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

const ctx = controllerContext('leader-election');

/**
 * Leader election on a coordination Lease, as client-go's leaderelection does: the control loops
 * run on exactly one replica at a time and move to another within the lease duration when the
 * leader dies. Expiry is judged on this replica's own clock from when it last saw the record
 * change, so clock skew between replicas does not matter.
 */
export class LeaderElector {
  private observed?: { record: string; at: number };

  constructor(
    private readonly store: ObjectStore,
    private readonly leaseType: ResourceType,
    private readonly o: LeaderElectionOptions,
  ) {}

  /**
   * Competes for leadership until the signal aborts; while leading, runs lead(signal) with a
   * signal that aborts when leadership is lost. Releases the lease on shutdown.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.tryAcquireOrRenew())) {
        await sleep(this.o.retryPeriodMs, signal);
        continue;
      }
      if (signal.aborted) {
        // Shutdown began while acquiring: hand the lease straight back instead of starting to lead.
        await this.release();
        break;
      }
      this.o.log.info({ identity: this.o.identity, lease: `${this.o.namespace}/${this.o.name}` }, 'became leader');
      const leading = new AbortController();
      setMaxListeners(100, leading.signal);
      const work = lead(leading.signal).catch((err) => this.o.log.error({ err }, 'control loops failed'));
      let lastRenew = Date.now();
      while (!signal.aborted) {
        await sleep(this.o.retryPeriodMs, signal);
        if (signal.aborted) break;
        if (await this.tryAcquireOrRenew()) {
          lastRenew = Date.now();
        } else if (Date.now() - lastRenew > this.o.renewDeadlineMs) {
          this.o.log.warn({ identity: this.o.identity }, 'leadership lost: could not renew the lease in time');
          break;
        }
      }
      leading.abort();
      await work;
      if (signal.aborted) await this.release();
    }
  }

  /** One acquire-or-renew attempt; true when this replica holds the lease afterwards. Never throws. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const nowDate = this.o.now();
    const now = rfc3339Micro(nowDate);
    const durationS = Math.ceil(this.o.leaseDurationMs / 1000);
    try {
      let lease: KObject;
      try {
        lease = await this.store.get(this.leaseType, this.o.namespace, this.o.name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        await this.store.create(
          this.leaseType,
          this.o.namespace,
          {
            apiVersion: 'coordination.svc.io/v1',
            kind: 'Lease',
            metadata: { name: this.o.name, namespace: this.o.namespace },
            spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durationS, acquireTime: now, renewTime: now, leaseTransitions: 0 },
          },
          ctx,
        );
        this.observe('created-by-me');
        return true;
      }
      const spec = (lease.spec ?? {}) as LeaseSpec;
      const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.acquireTime]);
      if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
      const mine = spec.holderIdentity === this.o.identity;
      const held = !!spec.holderIdentity;
      const expired = Date.now() - this.observed.at > (spec.leaseDurationSeconds ?? durationS) * 1000;
      if (held && !mine && !expired) return false;
      const next: LeaseSpec = {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationS,
        acquireTime: mine ? spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      };
      // Pinning resourceVersion makes two replicas racing for an expired lease safe: one gets 409.
      await this.store.update(this.leaseType, this.o.namespace, this.o.name, () => ({ ...lease, spec: next }), ctx);
      this.observe(JSON.stringify([next.holderIdentity, next.renewTime, next.acquireTime]));
      return true;
    } catch (err) {
      if (!(isConflict(err) || isAlreadyExists(err) || isNotFound(err))) this.o.log.warn({ err }, 'leader election: lease update failed');
      return false;
    }
  }

  private observe(record: string): void {
    this.observed = { record, at: Date.now() };
  }

  /** Gives the lease up on clean shutdown so another replica takes over at once (client-go's ReleaseOnCancel). */
  private async release(): Promise<void> {
    try {
      const lease = await this.store.get(this.leaseType, this.o.namespace, this.o.name);
      const spec = (lease.spec ?? {}) as LeaseSpec;
      if (spec.holderIdentity !== this.o.identity) return;
      await this.store.update(this.leaseType, this.o.namespace, this.o.name, () => ({ ...lease, spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1 } }), ctx);
      this.o.log.info('released leadership');
    } catch (err) {
      this.o.log.warn({ err }, 'could not release the lease');
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => (signal.removeEventListener('abort', done), resolve()), ms);
    const done = () => (clearTimeout(t), resolve());
    signal.addEventListener('abort', done, { once: true });
  });
}
