import { isAlreadyExists } from '../../api/errors';
import type { KObject } from '../../api/types';
import { get, num } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import { newControllerRef } from './controller-ref';
import { maxRevision, REVISION_HASH_LABEL, revisionNumber, RevisionWriter, sameRevisionData, sortRevisions, templatePatch } from './history';
import { computeTemplateHash } from './revision-hash';

/**
 * A DaemonSet's ControllerRevisions (upstream daemon/update.go constructHistory, snapshot,
 * dedupCurHistories, cleanupHistory): the revision whose data is the DaemonSet's current template
 * is "current" (made when missing, renumbered above the others after a rollback), the rest is
 * history, trimmed to revisionHistoryLimit. Pods carry the current revision's hash label.
 */
export class DaemonSetHistory {
  private readonly writer: RevisionWriter;

  constructor(
    private readonly store: ObjectStore,
    private readonly types: { sets: ResourceType; revisions: ResourceType },
    private readonly ctx: WriteContext,
  ) {
    this.writer = new RevisionWriter(store, types.revisions, ctx);
  }

  /** Upstream constructHistory over the revisions the DaemonSet controls. */
  async construct(ds: KObject, owned: readonly KObject[]): Promise<{ cur: KObject; old: KObject[] }> {
    const data = templatePatch(ds);
    const current: KObject[] = [];
    const old: KObject[] = [];
    for (let r of owned) {
      // Revisions made without the hash label get their name as one (upstream does the same).
      if (!r.metadata.labels?.[REVISION_HASH_LABEL]) r = await this.writer.label(r, { [REVISION_HASH_LABEL]: r.metadata.name! });
      (sameRevisionData(r, { metadata: {}, data }) ? current : old).push(r);
    }
    const next = maxRevision(old) + 1;
    if (current.length === 0) return { cur: await this.snapshot(ds, next), old };
    // Duplicates of the current revision (a race of two syncs): keep the newest, drop the rest.
    const sorted = sortRevisions(current);
    let cur = sorted[sorted.length - 1];
    for (const dup of sorted.slice(0, -1)) await this.writer.delete(dup);
    if (revisionNumber(cur) < next) cur = await this.writer.renumber(cur, next);
    return { cur, old };
  }

  /**
   * Upstream snapshot: a revision named <ds>-<hash of the template and collision count>. When the
   * name is taken by a revision with other data, the DaemonSet's status.collisionCount is raised
   * (so the next sync hashes to another name) and the sync fails to be retried.
   */
  private async snapshot(ds: KObject, revision: number): Promise<KObject> {
    const collisionCount = num(get(ds, 'status', 'collisionCount'));
    const hash = computeTemplateHash(get(ds, 'spec', 'template'), collisionCount);
    const ns = ds.metadata.namespace ?? '';
    const name = `${ds.metadata.name}-${hash}`;
    const cr: KObject = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ns,
        labels: { ...((get(ds, 'spec', 'template', 'metadata', 'labels') ?? {}) as Record<string, string>), [REVISION_HASH_LABEL]: hash },
        ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [newControllerRef(ds, 'apps/v1', 'DaemonSet')],
      },
      data: templatePatch(ds),
      revision,
    };
    try {
      return await this.store.create(this.types.revisions, ns, cr, this.ctx);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.store.get(this.types.revisions, ns, name);
      if (sameRevisionData(existing, cr)) return existing;
      await this.store.update(
        this.types.sets,
        ns,
        ds.metadata.name!,
        (cur) => {
          const now = num(get(cur, 'status', 'collisionCount'));
          if (now !== collisionCount) throw new Error(`found a stale collision count (${collisionCount ?? 0}, expected ${now ?? 0}) of DaemonSet "${ds.metadata.name}" while processing; will retry until it is updated`);
          cur!.status = { ...((cur!.status ?? {}) as Record<string, unknown>), collisionCount: (collisionCount ?? 0) + 1 };
          return cur!;
        },
        { ...this.ctx, subresource: 'status' },
      );
      throw new Error(`found a hash collision for DaemonSet "${ds.metadata.name}" (revision ${name}); collisionCount raised`, { cause: err });
    }
  }

  /** Upstream cleanupHistory: the oldest old revisions no pod carries, beyond revisionHistoryLimit. */
  async cleanup(ds: KObject, old: readonly KObject[], pods: readonly KObject[]): Promise<void> {
    let toKill = old.length - (num(get(ds, 'spec', 'revisionHistoryLimit')) ?? 10);
    if (toKill <= 0) return;
    const live = new Set(pods.map((p) => p.metadata.labels?.[REVISION_HASH_LABEL]).filter((h) => !!h));
    for (const r of sortRevisions(old)) {
      if (toKill <= 0) break;
      if (live.has(r.metadata.labels?.[REVISION_HASH_LABEL])) continue;
      await this.writer.delete(r);
      toKill--;
    }
  }
}
