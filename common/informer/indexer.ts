import { objectKey, type MetaObject } from './list-watch';

/** Index values of an object (client-go's IndexFunc); an empty list leaves it out of the index. */
export type IndexFunc<T> = (obj: T) => string[];

/** The index every indexer has: objects by metadata.namespace ('' for cluster-scoped ones). */
export const NAMESPACE_INDEX = 'namespace';

/** Read access to an informer's cache (client-go's Indexer, reads only). Objects are shared: callers must not modify them. */
export interface IndexerReader<T> {
  /** The object stored under "namespace/name" (or "name" for a cluster-scoped one). */
  get(key: string): T | undefined;
  /** Every object, in no particular order. */
  list(): T[];
  /** Every key. */
  listKeys(): string[];
  /** The objects whose index function returned value. Throws for an index that does not exist. */
  byIndex(index: string, value: string): T[];
  /** The keys of byIndex. */
  indexKeys(index: string, value: string): string[];
  size(): number;
}

/**
 * The informer's thread-safe store of client-go, minus the threads: objects by key, plus indexes
 * kept current on every write. Only the informer writes it.
 */
export class Indexer<T extends MetaObject> implements IndexerReader<T> {
  private readonly items = new Map<string, T>();
  private readonly funcs = new Map<string, IndexFunc<T>>();
  /** index name → value → keys. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Readonly<Record<string, IndexFunc<T>>> = {}) {
    this.addIndexers({ [NAMESPACE_INDEX]: (o) => [o.metadata.namespace ?? ''], ...indexers });
  }

  /** Whether an index of that name exists (client-go: GetIndexers()[name]). */
  hasIndexer(name: string): boolean {
    return this.funcs.has(name);
  }

  /** Adds index functions, indexing what is already stored. A name already in use throws. */
  addIndexers(indexers: Readonly<Record<string, IndexFunc<T>>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.funcs.has(name)) throw new Error(`indexer "${name}" already exists`);
      this.funcs.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) addTo(index, fn(obj), key);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(index: string, value: string): T[] {
    return this.indexKeys(index, value).map((k) => this.items.get(k)!);
  }

  indexKeys(index: string, value: string): string[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`index "${index}" does not exist`);
    return [...(idx.get(value) ?? [])];
  }

  size(): number {
    return this.items.size;
  }

  /** Stores the object under its key; returns the one it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.funcs) addTo(this.indices.get(name)!, fn(obj), key);
    return old;
  }

  /** Removes the key; returns the object it held. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.funcs) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const keys = idx.get(v);
        keys?.delete(key);
        if (keys?.size === 0) idx.delete(v);
      }
    }
  }
}

function addTo(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    let keys = index.get(v);
    if (!keys) index.set(v, (keys = new Set()));
    keys.add(key);
  }
}
