import type { Logger } from 'pino';
import type { ResourceType } from '../registry/resource-type';
import { StorageError, type Storage } from '../storage/storage';
import { typePrefix } from './keys';
import { encodeStored } from './stored-object';
import { CorruptObjectError, decodeObject } from './watch-cache';

const PAGE = 500;

/**
 * Moves the objects a type wrote under its own keys before it became a view of another
 * resource's storage (ResourceType.storedAs: events.svc.io/v1 Events were stored apart from
 * core/v1 Events until both became one resource, as upstream) into that storage, in its form.
 * Without this, a data directory from an older svc keeps them under keys nothing reads, lists,
 * expires or deletes. Runs at start before anything reads; each object is created at its new key
 * unless one is there already (another API server on the same etcd moved it first), then its old
 * key is deleted at the version read, so several servers starting at once move each object once.
 * Answers how many objects moved.
 */
export async function moveViewObjects(storage: Storage, types: readonly ResourceType[], log: Logger): Promise<number> {
  let moved = 0;
  for (const t of types) {
    if (!t.storedAs) continue;
    const own = `/${t.group || 'core'}/${t.resource}/`;
    const target = typePrefix(t);
    if (own === target) continue;
    for (let startAfter: string | undefined; ; ) {
      const page = await storage.list(own, { limit: PAGE, startAfter });
      for (const kv of page.items) {
        try {
          const obj = decodeObject(kv.value, kv.modRevision);
          await storage.create(`${target}${kv.key.slice(own.length)}`, encodeStored(t, obj)).catch((err: unknown) => {
            if (!(err instanceof StorageError && err.code === 'AlreadyExists')) throw err;
          });
          moved++;
        } catch (err) {
          // An undecodable object stays where it is, named in the log, rather than being dropped.
          if (err instanceof CorruptObjectError) {
            log.error({ key: kv.key, err: err.message }, 'stored object cannot be decoded; it is left at its old key');
            continue;
          }
          throw err;
        }
        await storage.delete(kv.key, kv.modRevision).catch((err: unknown) => {
          if (!(err instanceof StorageError && (err.code === 'NotFound' || err.code === 'Conflict'))) throw err;
        });
      }
      if (page.remaining === 0 || page.items.length === 0) break;
      startAfter = page.items[page.items.length - 1].key;
    }
    if (moved > 0) log.info({ group: t.group, resource: t.resource, moved, to: target }, 'moved objects stored under the type\'s own keys to the storage it now shares');
  }
  return moved;
}
