import { isAlreadyExists, isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import { canonicalJson } from './revision-hash';

/**
 * ControllerRevisions as the history of a StatefulSet or DaemonSet (upstream pkg/controller/history
 * and the two controllers' getPatch / ApplyRevision): each revision's data is a strategic merge
 * patch `{spec: {template: {..., $patch: replace}}}` that restores the owner's pod template, which
 * is also what `kubectl rollout undo` sends back to the owner.
 */

/** The label on revisions (and on the pods made from them) naming the revision's hash, as upstream (no domain). */
export const REVISION_HASH_LABEL = 'controller-revision-hash';

export function revisionNumber(cr: KObject): number {
  return typeof cr.revision === 'number' ? cr.revision : 0;
}

/** Upstream SortControllerRevisions: by revision, then creation time, then name. */
export function sortRevisions(revisions: readonly KObject[]): KObject[] {
  return [...revisions].sort((a, b) => {
    const d = revisionNumber(a) - revisionNumber(b);
    if (d !== 0) return d;
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
  });
}

/** Upstream getPatch: the owner's pod template as a patch that replaces spec.template whole. */
export function templatePatch(owner: KObject): Record<string, unknown> {
  const template = structuredClone(((owner.spec as Record<string, unknown> | undefined)?.template ?? {}) as Record<string, unknown>);
  return { spec: { template: { ...template, $patch: 'replace' } } };
}

/** Upstream ApplyRevision: the owner with the pod template the revision restores (nothing else of the owner changes). */
export function withRevisionTemplate(owner: KObject, revision: KObject): KObject {
  const out = structuredClone(owner);
  const template = structuredClone(((revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template ?? {}));
  delete template.$patch;
  (out.spec as Record<string, unknown>).template = template;
  return out;
}

/** Upstream EqualRevision: the same data (compared as canonical JSON, where upstream compares Go's JSON bytes). */
export function sameRevisionData(a: KObject, b: KObject): boolean {
  return canonicalJson(a.data) === canonicalJson(b.data);
}

/** Upstream MaxRevision: the highest revision number, 0 without revisions. */
export function maxRevision(revisions: readonly KObject[]): number {
  return revisions.reduce((max, r) => Math.max(max, revisionNumber(r)), 0);
}

/** Writes a controller's revisions (upstream realHistory) under the controller's identity. */
export class RevisionWriter {
  constructor(
    private readonly store: ObjectStore,
    private readonly type: ResourceType,
    private readonly ctx: WriteContext,
  ) {}

  /**
   * Upstream CreateControllerRevision: creates the revision under the name name(collisionCount);
   * when that name is taken by a revision with other data, counts a collision and tries the next
   * name. Answers the revision (created, or the equal one found) and the collision count reached.
   */
  async create(revision: KObject, name: (collisionCount: number) => { name: string; hash: string }, collisionCount: number): Promise<{ revision: KObject; collisionCount: number }> {
    const ns = revision.metadata.namespace ?? '';
    for (let count = collisionCount; ; count++) {
      const { name: n, hash } = name(count);
      const candidate = structuredClone(revision);
      candidate.metadata.name = n;
      candidate.metadata.labels = { ...(candidate.metadata.labels ?? {}), [REVISION_HASH_LABEL]: hash };
      try {
        return { revision: await this.store.create(this.type, ns, candidate, this.ctx), collisionCount: count };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const existing = await this.store.get(this.type, ns, n);
        if (sameRevisionData(existing, candidate)) return { revision: existing, collisionCount: count };
      }
    }
  }

  /** Upstream UpdateControllerRevision: gives an existing revision a new number (a rollback to it). */
  async renumber(revision: KObject, number: number): Promise<KObject> {
    const { object } = await this.store.update(
      this.type,
      revision.metadata.namespace ?? '',
      revision.metadata.name!,
      (cur) => {
        if (!cur) throw new Error('revision vanished');
        cur.revision = number;
        return cur;
      },
      this.ctx,
    );
    return object;
  }

  /** Adds labels the revision lacks (the DaemonSet controller's hash label on revisions made without it). */
  async label(revision: KObject, labels: Record<string, string>): Promise<KObject> {
    const { object } = await this.store.update(
      this.type,
      revision.metadata.namespace ?? '',
      revision.metadata.name!,
      (cur) => {
        if (!cur) throw new Error('revision vanished');
        cur.metadata.labels = { ...(cur.metadata.labels ?? {}), ...labels };
        return cur;
      },
      this.ctx,
    );
    return object;
  }

  /** Deletes a revision of the history beyond revisionHistoryLimit (uid precondition; one already gone is fine). */
  async delete(revision: KObject): Promise<void> {
    try {
      await this.store.delete(this.type, revision.metadata.namespace ?? '', revision.metadata.name!, { preconditions: { uid: revision.metadata.uid } }, this.ctx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
