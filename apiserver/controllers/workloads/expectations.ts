/**
 * Upstream's ControllerExpectations (pkg/controller/controller_utils.go): how many creates and
 * deletes a controller has issued for an owner but not yet seen in its informer. Until they are
 * observed (or expire after 5 minutes, upstream's ExpectationsTimeout), a sync must not act on
 * the cache, which would still show the old count and make it create or delete twice.
 */

const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Pending {
  adds: number;
  /** uids of pods whose deletion was requested and not yet observed (upstream UIDTrackingControllerExpectations). */
  dels: Set<string>;
  /** Deletions counted without a uid. */
  delCount: number;
  setAtMs: number;
}

export class Expectations {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly nowMs: () => number) {}

  /** True when nothing is pending for the key (or what is pending expired): a sync may trust the cache. */
  satisfied(key: string): boolean {
    const p = this.pending.get(key);
    if (!p) return true;
    if ((p.adds <= 0 && p.dels.size === 0 && p.delCount <= 0) || this.nowMs() - p.setAtMs > EXPECTATIONS_TIMEOUT_MS) return true;
    return false;
  }

  /** Records a batch about to be issued: adds creates and deletes (by uid where known). */
  expect(key: string, adds: number, delUids: readonly string[] = [], delCount = 0): void {
    this.pending.set(key, { adds, dels: new Set(delUids), delCount, setAtMs: this.nowMs() });
  }

  /** A create was observed in the informer, or failed and will never be. */
  creationObserved(key: string): void {
    const p = this.pending.get(key);
    if (p) p.adds--;
  }

  /** A deletion was observed (uid given) or failed; without a uid one counted deletion is released. */
  deletionObserved(key: string, uid?: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    if (uid !== undefined && p.dels.delete(uid)) return;
    if (uid === undefined && p.delCount > 0) p.delCount--;
  }

  /** Forgets the owner (it was deleted). */
  delete(key: string): void {
    this.pending.delete(key);
  }
}
