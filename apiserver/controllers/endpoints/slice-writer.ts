import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { ApiError, isNotFound } from '../../api/errors';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore } from '../../store/object-store';
import type { WriteContext } from '../../store/write-context';
import type { SliceContent, SlicePlan } from './endpoint-slices';

/** A sync refused because the informer has not yet seen this writer's own writes: routine, retried. */
export class StaleSliceCacheError extends Error {}

/** Logs a failed sync: a stale cache at debug (it is routine), anything else as a warning. */
export function logSyncError(log: Pick<Logger, 'debug' | 'warn'>, key: string, err: unknown, what: string): void {
  if (err instanceof StaleSliceCacheError) log.debug({ service: key }, err.message);
  else log.warn({ err: String(err), service: key }, `${what} failed; retrying`);
}

/** The metadata every slice of one owner carries. */
export interface SliceMeta {
  labels: Record<string, string>;
  ownerReferences: NonNullable<KObject['metadata']['ownerReferences']>;
  generateName: string;
}

/**
 * Writes a slice plan for one owner and remembers what it wrote, as upstream's
 * endpointSliceTracker: checkFresh refuses a sync while the informer has not seen those writes
 * (the caller's queue retries), so a lagging cache never leads to a duplicate slice.
 */
export class SliceWriter {
  /** Per owner key: slice name → resourceVersion written, or null for a deletion. */
  private readonly expected = new Map<string, Map<string, string | null>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly type: ResourceType,
    private readonly ctx: WriteContext,
  ) {}

  /** Throws while the informer's slices (managed) lag behind this writer's own writes; a write is forgotten once seen. */
  checkFresh(k: string, managed: readonly KObject[]): void {
    const want = this.expected.get(k);
    if (!want) return;
    const seen = new Map(managed.map((s) => [s.metadata.name!, Number(s.metadata.resourceVersion)]));
    for (const [name, rv] of want) {
      const fresh = rv === null ? !seen.has(name) : (seen.get(name) ?? -1) >= Number(rv);
      if (fresh) want.delete(name);
    }
    if (want.size) throw new StaleSliceCacheError(`the endpoint slice cache for ${k} is out of date`);
    this.expected.delete(k);
  }

  private remember(k: string, name: string, rv: string | null): void {
    const m = this.expected.get(k) ?? new Map<string, string | null>();
    this.expected.set(k, m);
    m.set(name, rv);
  }

  /** Deletes, updates and creates as planned; meta undefined (the owner is gone) only deletes. Slices whose labels drifted are rewritten too. */
  async apply(k: string, namespace: string, plan: SlicePlan, managed: readonly KObject[], meta: SliceMeta | undefined): Promise<void> {
    for (const n of plan.delete) {
      try {
        await this.store.delete(this.type, namespace, n, {}, this.ctx);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.remember(k, n, null);
    }
    if (!meta) return;
    const updates = new Map(plan.update.map((u) => [u.name, u.content]));
    for (const s of managed) {
      if (plan.delete.includes(s.metadata.name!) || updates.has(s.metadata.name!)) continue;
      if (!isDeepStrictEqual(s.metadata.labels ?? {}, meta.labels)) updates.set(s.metadata.name!, { addressType: String(s.addressType), ports: (s.ports ?? []) as never, endpoints: (s.endpoints ?? []) as never });
    }
    for (const [n, content] of updates) {
      const { object } = await this.store.update(this.type, namespace, n, (cur) => {
        if (!cur) throw new ApiError('NotFound', `endpointslices "${n}" not found`);
        return { ...cur, ...content, metadata: { ...cur.metadata, labels: meta.labels, ownerReferences: meta.ownerReferences } };
      }, this.ctx);
      this.remember(k, n, object.metadata.resourceVersion!);
    }
    for (const content of plan.create) {
      const created = await this.store.create(this.type, namespace, slice(namespace, meta, content), this.ctx);
      this.remember(k, created.metadata.name!, created.metadata.resourceVersion!);
    }
  }
}

function slice(namespace: string, meta: SliceMeta, content: SliceContent): KObject {
  return {
    apiVersion: 'discovery.svc.io/v1',
    kind: 'EndpointSlice',
    metadata: { generateName: meta.generateName, namespace, labels: meta.labels, ownerReferences: meta.ownerReferences },
    ...content,
  };
}
