import { ApiError, errors } from '../api/errors';
import { matches, type Selector } from '../api/selectors';
import type { KList, KObject } from '../api/types';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { StorageError, type KeyValue, type ListResult, type Storage } from '../storage/storage';
import { encodeContinue } from './continue-token';
import { collectionPrefix } from './keys';
import { planList, type ListParams, type ReadPlan } from './read-plan';
import { decodeRaw, reuseOrDecode, servedMany, type StoredVersion } from './stored-object';
import { tooOld } from './watch-cache';

export interface ListQuery extends ListParams {
  labelSelector: Selector;
  fieldSelector: Selector;
  /** The caller's items for stored versions (see StoredVersion); not asked when selectors apply (they read the object). */
  stored?: StoredVersion;
}

/** What a list needs of the watch cache: resolves once the cache has seen rev, else rejects (504) after timeoutMs. */
export interface RevisionWaiter {
  waitForRevision(rev: number, timeoutMs: number): Promise<void>;
}

/** A list in the making: the matching objects so far and where the read stands. */
interface Collected {
  items: KObject[];
  revision: number;
  lastKey?: string;
  /** Keys after the last one read, unfiltered (2.3 remainingItemCount). */
  remaining: number;
  /** True when the limit cut the list short and keys remain. */
  more: boolean;
}

/**
 * Reads collections (2.3, 4.6, 4.7): the read plan of a list's resourceVersion parameters,
 * label and field selectors, chunking with continue tokens, and the errors of reads at a
 * compacted or future revision. Upstream's Store.List plus the cacher's filtering; it writes nothing.
 */
export class ListReader {
  constructor(
    private readonly storage: Pick<Storage, 'list'>,
    private readonly revisions: RevisionWaiter,
    /** How long a "not older than" read waits for a future revision before 504. */
    private readonly rvWaitMs: number,
  ) {}

  /** Lists with selectors and chunking. */
  async list(t: ResourceType, namespace: string, q: ListQuery): Promise<KList> {
    const plan = planList(q);
    let revision = 0;
    let startAfter: string | undefined;
    if (plan.mode === 'exact') revision = plan.revision;
    const prefix = collectionPrefix(t, namespace);
    if (plan.mode === 'continue') {
      revision = plan.token.revision;
      startAfter = plan.token.startAfter;
      // A token pages only the list it came from (or one that contains it: all namespaces). Upstream
      // keeps the key relative to the prefix, so a foreign token pages this list from an arbitrary
      // point; ours are absolute, so a foreign one is refused rather than read as "from the start"
      // or "nothing left".
      if (!startAfter.startsWith(prefix)) throw new ApiError('BadRequest', 'continue key is not valid: it was issued for another list');
    }
    if (plan.mode === 'notOlderThan') await this.revisions.waitForRevision(plan.revision, this.rvWaitMs);
    const filtering = q.labelSelector.length > 0 || q.fieldSelector.length > 0;
    const got = await this.collect(t, prefix, q, plan, revision, startAfter);
    const list: KList = {
      apiVersion: apiVersionOf(t),
      kind: t.listKind,
      metadata: { resourceVersion: String(got.revision) },
      items: got.items,
    };
    if (got.more && got.lastKey) {
      list.metadata.continue = encodeContinue({ revision: got.revision, startAfter: got.lastKey });
      // 2.3: omitted when a selector is used (the count would be of unfiltered keys).
      if (!filtering) list.metadata.remainingItemCount = got.remaining;
    }
    return list;
  }

  /** True when the object passes the query's label and field selectors. */
  selects(t: ResourceType, obj: KObject, q: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): boolean {
    const labels = obj.metadata.labels ?? {};
    if (!matches(q.labelSelector, (k) => labels[k])) return false;
    return matches(q.fieldSelector, (k) => fieldValue(t, obj, k));
  }

  /** Reads pages until the limit is filled or the keys run out; with selectors it keeps reading, as upstream does. */
  private async collect(t: ResourceType, prefix: string, q: ListQuery, plan: ReadPlan, revision: number, startAfter: string | undefined): Promise<Collected> {
    const limit = q.limit && q.limit > 0 ? q.limit : 0;
    const filtering = q.labelSelector.length > 0 || q.fieldSelector.length > 0;
    const got: Collected = { items: [], revision, remaining: 0, more: false };
    const corrupt: string[] = [];
    for (;;) {
      const want = limit ? limit - got.items.length : 0;
      const res = await this.readPage(prefix, { limit: limit ? (filtering ? Math.max(want, 100) : want) : 0, startAfter, revision: got.revision }, plan);
      got.revision = res.revision;
      // A type with a converter (a conversion webhook) has the page converted in one call.
      const converted = t.converter ? await convertPage(t, res.items, corrupt) : undefined;
      let i = 0;
      for (; i < res.items.length; i++) {
        const kv = res.items[i];
        got.lastKey = kv.key;
        let obj: KObject;
        if (converted) {
          const c = converted[i];
          if (!c) continue;
          obj = c;
        } else {
          try {
            obj = reuseOrDecode(t, kv, filtering ? undefined : q.stored);
          } catch (err) {
            // Keep reading so the error names every undecodable object of the list, not just the first.
            if (!isDecodeError(err)) throw err;
            corrupt.push(decodeErrorText(err));
            continue;
          }
        }
        if (!filtering || this.selects(t, obj, q)) got.items.push(obj);
        if (limit && got.items.length >= limit) {
          i++;
          break;
        }
      }
      got.remaining = res.remaining + (res.items.length - i);
      if (limit && got.items.length >= limit) {
        got.more = got.remaining > 0;
        break;
      }
      if (res.remaining === 0 || !limit) break;
      startAfter = got.lastKey;
    }
    if (corrupt.length > 0) throw errors.internal(`failed to decode ${corrupt.length} stored object(s): ${corrupt.join('; ')}`);
    return got;
  }

  /** One storage page; a compacted revision is 410 (worded for an expired continue token), a future one 504. */
  private async readPage(prefix: string, opts: { limit: number; startAfter?: string; revision: number }, plan: ReadPlan): Promise<ListResult> {
    try {
      return await this.storage.list(prefix, opts);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Compacted') {
        if (plan.mode === 'continue') {
          throw new ApiError(
            'Expired',
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
          );
        }
        throw tooOld(opts.revision);
      }
      if (err instanceof StorageError && err.code === 'FutureRevision') {
        // A token's revision is one the store had when it issued it; a later one is forged, and a
        // 504 would have the client retry it.
        if (plan.mode === 'continue') throw new ApiError('BadRequest', 'continue key is not valid: its resourceVersion is newer than the store');
        throw new ApiError('Timeout', `Too large resource version: ${opts.revision}`, { retryAfterSeconds: 1 });
      }
      throw err;
    }
  }
}

function isDecodeError(err: unknown): err is ApiError {
  return err instanceof ApiError && err.code === 500;
}

function decodeErrorText(err: ApiError): string {
  return err.message.replace(/^Internal error occurred: failed to decode the stored object /, '');
}

/** A page's objects as t serves them, converted in one call; an undecodable one is undefined, named in corrupt. */
async function convertPage(t: ResourceType, kvs: KeyValue[], corrupt: string[]): Promise<Array<KObject | undefined>> {
  const raw: Array<KObject | undefined> = kvs.map((kv) => {
    try {
      return decodeRaw(kv);
    } catch (err) {
      if (!isDecodeError(err)) throw err;
      corrupt.push(decodeErrorText(err));
      return undefined;
    }
  });
  const present = raw.filter((o): o is KObject => o !== undefined);
  const served = await servedMany(t, present);
  let j = 0;
  return raw.map((o) => (o ? served[j++] : undefined));
}

/** Value of a selectable field as a string (metadata.name, metadata.namespace, then the type's own). */
export function fieldValue(t: ResourceType, obj: KObject, key: string): string | undefined {
  if (key === 'metadata.name') return obj.metadata.name ?? '';
  if (key === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return t.fieldSelectors?.[key]?.(obj) ?? '';
}

/** The field selector keys a type accepts. */
export function selectableFields(t: ResourceType): Set<string> {
  const s = new Set(['metadata.name', 'metadata.namespace']);
  for (const k of Object.keys(t.fieldSelectors ?? {})) s.add(k);
  return s;
}
