/**
 * The node heartbeat Lease (spec 8), after upstream's component-helpers lease controller as the
 * kubelet runs it: the Lease svc-node-lease/<node>, owned by the Node, holderIdentity = node
 * name, renewed every leaseDuration/4 (10 s for the default 40 s) with a little jitter. A renewal
 * first updates the last Lease it wrote; on conflict or absence it falls back to get-or-create.
 * Failures retry with exponential back-off from 200 ms to 7 s, and every second consecutive
 * failure the client's connections are dropped and redialed: the node's shared heartbeat failure
 * policy (./heartbeat-policy), so a half-dead connection cannot outlive the 50 s grace period.
 */
import type { KObject, OwnerReference } from '../../apiserver/api/types';
import { NODE_LEASE_NAMESPACE } from '../../apiserver/api/well-known';
import type { ApiClient } from '../client/api-client';
import { isAbort, isConflict, isNotFound, isAlreadyExists } from '../client/client-error';
import { leasesResource } from '../client/resources';
import type { Log } from '../platform/logger';
import { jittered } from './backoff';
import type { Clock, Random } from '../platform/clock';
import { microTime } from './node-status';
import { HeartbeatPolicy, type LoopFailures } from './heartbeat-policy';
import type { ProgressTracker } from './progress';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  renewTime?: string;
  acquireTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KObject {
  spec?: LeaseSpec;
}

export interface LeaseControllerDeps {
  client: ApiClient;
  clock: Clock;
  log: Log;
  nodeName: string;
  leaseDurationSeconds: number;
  /** The Node's uid for the owner reference; undefined until known (the Lease is then created without one and fixed later). */
  nodeUid: () => string | undefined;
  random?: Random;
  /** The node's heartbeat failure policy (observer, redial, health), shared with the status loop; default: one of its own with none of them. */
  policy?: HeartbeatPolicy;
  /** Redial after this many consecutive failures (default 2). */
  redialAfterFailures?: number;
  progress?: ProgressTracker;
  /** Jitter fraction added to the renew interval (upstream: 0.04). */
  jitter?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export class LeaseController {
  private latest: Lease | undefined;
  private renewedOnce = false;
  private readonly firstRenewal: Promise<void>;
  private resolveFirst!: () => void;
  /** This loop under the node's failure policy: counts, back-off, logs, redial, metrics, progress. */
  readonly failures: LoopFailures;

  constructor(private readonly d: LeaseControllerDeps) {
    this.firstRenewal = new Promise((r) => (this.resolveFirst = r));
    this.failures = (d.policy ?? new HeartbeatPolicy()).loop({
      kind: 'lease',
      log: d.log,
      nodeName: d.nodeName,
      ...(d.progress ? { progress: d.progress } : {}),
      redialAfterFailures: d.redialAfterFailures ?? 2,
      backoff: { initialMs: d.initialBackoffMs ?? 200, maxMs: d.maxBackoffMs ?? 7000 },
      messages: { failed: 'failed to renew node lease; will retry', redial: 'repeated heartbeat failures; redialing the API server', recovered: 'node lease renewed again' },
    });
  }

  /** leaseDuration/4, as the kubelet's renewInterval (NodeLeaseDurationSeconds * 0.25). */
  get renewIntervalMs(): number {
    return (this.d.leaseDurationSeconds * 1000) / 4;
  }

  /** Resolves after the first successful renewal (never rejects; may never resolve). */
  whenFirstRenewed(): Promise<void> {
    return this.firstRenewal;
  }

  /** Renews until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.syncWithRetry(signal);
      const wait = jittered(this.renewIntervalMs, this.d.jitter ?? 0.04, this.d.random);
      if (!(await this.d.clock.sleep(wait, signal))) break;
    }
  }

  /** Renews once, retrying with back-off until it succeeds or `signal` aborts. */
  async syncWithRetry(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.renew(signal);
        this.failures.succeeded();
        if (!this.renewedOnce) {
          this.renewedOnce = true;
          this.resolveFirst();
        }
        return;
      } catch (e) {
        if (signal.aborted || isAbort(e)) return;
        const retryInMs = await this.failures.failed(e);
        await this.d.clock.sleep(retryInMs ?? this.renewIntervalMs, signal);
      }
    }
  }

  /** One renewal; rejects with the ClientError of the failing call. */
  async renew(signal?: AbortSignal): Promise<Lease> {
    if (this.latest) {
      try {
        this.latest = await this.update(this.latest, signal);
        return this.latest;
      } catch (e) {
        // A conflict or a vanished Lease: fall back to reading (or creating) it, as upstream does.
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.latest = undefined;
      }
    }
    let lease: Lease;
    try {
      lease = await this.d.client.get<Lease>(leasesResource, this.d.nodeName, { namespace: NODE_LEASE_NAMESPACE, signal });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        this.latest = await this.d.client.create<Lease>(leasesResource, this.newLease(), { namespace: NODE_LEASE_NAMESPACE, signal });
        this.d.log.info({ node: this.d.nodeName, namespace: NODE_LEASE_NAMESPACE }, 'created node lease');
        return this.latest;
      } catch (ce) {
        if (!isAlreadyExists(ce)) throw ce;
        lease = await this.d.client.get<Lease>(leasesResource, this.d.nodeName, { namespace: NODE_LEASE_NAMESPACE, signal });
      }
    }
    this.latest = await this.update(lease, signal);
    return this.latest;
  }

  private ownerReferences(): OwnerReference[] | undefined {
    const uid = this.d.nodeUid();
    return uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.d.nodeName, uid }] : undefined;
  }

  private newLease(): Lease {
    const owners = this.ownerReferences();
    return {
      apiVersion: 'coordination.svc.io/v1',
      kind: 'Lease',
      metadata: { name: this.d.nodeName, namespace: NODE_LEASE_NAMESPACE, ...(owners ? { ownerReferences: owners } : {}) },
      spec: { holderIdentity: this.d.nodeName, leaseDurationSeconds: this.d.leaseDurationSeconds, renewTime: microTime(this.d.clock.now()) },
    };
  }

  private update(lease: Lease, signal?: AbortSignal): Promise<Lease> {
    const metadata = { ...lease.metadata };
    const owners = this.ownerReferences();
    // Upstream setNodeOwnerFunc: a Lease created before the Node was known gets its owner later.
    if (owners && !(metadata.ownerReferences ?? []).some((o) => o.kind === 'Node' && o.uid === owners[0].uid)) {
      metadata.ownerReferences = [...(metadata.ownerReferences ?? []).filter((o) => o.kind !== 'Node'), ...owners];
    }
    const next: Lease = {
      ...lease,
      metadata,
      spec: { ...lease.spec, holderIdentity: this.d.nodeName, leaseDurationSeconds: this.d.leaseDurationSeconds, renewTime: microTime(this.d.clock.now()) },
    };
    return this.d.client.update<Lease>(leasesResource, next, { namespace: NODE_LEASE_NAMESPACE, signal });
  }
}
