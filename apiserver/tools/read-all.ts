import type { KeyValue, Storage } from '../storage/storage';

/**
 * Every key of a store in key order, read in pages all pinned to the revision of the first page, so
 * the result is one consistent snapshot even while the store is written (a live etcd). Errors: the
 * store's (Compacted if a compaction overtakes a very long read; then run it again).
 */
export async function* readAll(storage: Storage, pageSize = 500, onRevision?: (revision: number) => void): AsyncGenerator<KeyValue> {
  let revision = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await storage.list('/', { limit: pageSize, startAfter, revision });
    if (revision === 0) {
      revision = page.revision;
      onRevision?.(revision);
    }
    for (const kv of page.items) yield kv;
    if (page.remaining === 0 || page.items.length === 0) return;
    startAfter = page.items[page.items.length - 1].key;
  }
}
