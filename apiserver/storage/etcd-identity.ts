import { StorageError } from './storage';

/** Asks one endpoint for the ID of the cluster it belongs to (etcd's Maintenance.Status header.cluster_id). */
export type ClusterIdProbe = (endpoint: string) => Promise<string>;

/** After an endpoint failed to answer a probe, calls skip it this long before probing it again. */
const RETRY_PROBE_MS = 1000;

/**
 * Keeps every call on the members of one etcd cluster. etcd3 (like clientv3) spreads calls over all
 * --etcd-servers and never compares the cluster_id of response headers, so an endpoint of another
 * cluster in the list silently receives a share of the writes (issue 7, bad input). Here each
 * endpoint's cluster ID is probed before any call is sent to it:
 * - Before the first call every endpoint is probed. If all that answer report one ID, that is the
 *   cluster; if they disagree, the ID reported by a majority of the configured endpoints is; with
 *   no such majority nothing is sent anywhere (the store is Unavailable, readyz fails) until the
 *   list is fixed.
 * - An endpoint reporting another ID is never used and is reported through onForeign (logged).
 * - An endpoint is probed again after a failed call on it, since a member can be replaced behind
 *   its URL.
 */
export class ClusterIdentity {
  private readonly ids = new Map<string, string>();
  private readonly unreachableAt = new Map<string, number>();
  private readonly probing = new Map<string, Promise<void>>();
  private readonly reported = new Set<string>();
  private pinned: string | undefined;

  constructor(
    private readonly endpoints: readonly string[],
    private readonly probe: ClusterIdProbe,
    private readonly now: () => number,
    /** Called once per endpoint found to belong to another cluster (for the log). */
    private readonly onForeign: (endpoint: string, id: string, expected: string) => void = () => undefined,
  ) {}

  /** The cluster ID in use, once decided. */
  get clusterId(): string | undefined {
    return this.pinned;
  }

  /**
   * Resolves when a call may go to endpoint; otherwise throws StorageError Unavailable before
   * anything is sent (the caller moves on to another endpoint): the endpoint does not answer,
   * belongs to another cluster, or the endpoints disagree without a majority.
   */
  async admit(endpoint: string): Promise<void> {
    if (!this.pinned) {
      await Promise.all(this.endpoints.map((e) => this.learn(e)));
      this.decide();
    } else if (!this.ids.has(endpoint)) {
      await this.learn(endpoint);
      this.check(endpoint);
    }
    if (!this.pinned) {
      const seen = [...this.ids].map(([e, id]) => `${e} → ${id}`).join(', ');
      throw new StorageError(
        'Unavailable',
        seen
          ? `etcd: the endpoints belong to different clusters and no majority of the ${this.endpoints.length} agrees (${seen}); fix --etcd-servers`
          : 'etcd: no endpoint answers',
      );
    }
    const id = this.ids.get(endpoint);
    if (id === undefined) throw new StorageError('Unavailable', `etcd: ${endpoint} does not answer`);
    if (id !== this.pinned) throw new StorageError('Unavailable', `etcd: ${endpoint} belongs to cluster ${id}, not ${this.pinned}; it is not used (fix --etcd-servers)`);
  }

  /** Forgets what endpoint reported (after a failed call there), so the next call there probes it again. */
  forget(endpoint: string): void {
    this.ids.delete(endpoint);
  }

  private learn(endpoint: string): Promise<void> {
    const failed = this.unreachableAt.get(endpoint);
    if (failed !== undefined && this.now() - failed < RETRY_PROBE_MS) return Promise.resolve();
    let p = this.probing.get(endpoint);
    if (!p) {
      p = this.probe(endpoint).then(
        (id) => {
          this.ids.set(endpoint, id);
          this.unreachableAt.delete(endpoint);
        },
        () => {
          this.ids.delete(endpoint);
          this.unreachableAt.set(endpoint, this.now());
        },
      );
      const done = p.finally(() => this.probing.delete(endpoint));
      this.probing.set(endpoint, done);
      return done;
    }
    return p;
  }

  private decide(): void {
    const votes = new Map<string, number>();
    for (const id of this.ids.values()) votes.set(id, (votes.get(id) ?? 0) + 1);
    if (votes.size === 1) this.pinned = [...votes.keys()][0];
    else for (const [id, n] of votes) if (n * 2 > this.endpoints.length) this.pinned = id;
    if (this.pinned) for (const e of this.ids.keys()) this.check(e);
  }

  private check(endpoint: string): void {
    const id = this.ids.get(endpoint);
    if (!this.pinned || id === undefined || id === this.pinned || this.reported.has(endpoint)) return;
    this.reported.add(endpoint);
    this.onForeign(endpoint, id, this.pinned);
  }
}
