import { StorageError, type Storage } from '../../storage/storage';

/** The Service an allocated address or port belongs to (upstream IPAddress spec.parentRef, services only). */
export interface AllocationOwner {
  namespace: string;
  name: string;
  /** The Service's uid: a Service deleted and made again under its name is another owner. */
  uid?: string;
}

/** One range of allocatable values, numbered by offset: the usable addresses of a CIDR, or a port range. */
export interface RangeSpec {
  /** The storage prefix of this range's keys, ending with "/"; one key per allocated value. */
  keyPrefix: string;
  /** How many values the range holds (offsets 0 … count-1). */
  count: number;
  nameAt(offset: number): string;
  /** The offset of a value's text; undefined when it lies outside the range. */
  offsetOf(name: string): number | undefined;
  /**
   * Offsets below this are the static band: dynamic allocation takes them only once the upper
   * band is full, so values users ask for by number rarely collide with allocated ones (upstream
   * KEP-3070 for cluster IPs, KEP-3668 for node ports).
   */
  staticBand: number;
  /** How messages name the range ("10.96.0.0/12", "30000-32767"). */
  describe: string;
  /** The resource of the owners (parentRef.resource); default services. */
  ownerResource?: string;
  /** The kind of the stored allocation objects; default IPAddress (networking.k8s.io/v1, upstream's shape). */
  kind?: string;
}

export type AllocateResult = 'allocated' | 'taken' | 'out-of-range';

/**
 * A range whose allocations are keys in the store, one per allocated value, made with the store's
 * create (create-if-absent): an allocation is atomic with the store, survives restarts and never
 * succeeds twice for one value however many API servers allocate at once. This follows upstream's
 * IPAddress allocator (one networking/v1 IPAddress object per cluster IP since 1.31) rather than the
 * older bitmap in a RangeAllocation object; the keys are internal (not served as IPAddress objects)
 * and node ports are kept the same way.
 */
export class KeyedRange {
  constructor(
    private readonly storage: Storage,
    readonly spec: RangeSpec,
    private readonly random: () => number = Math.random,
  ) {}

  /** Takes one given value for the owner. */
  async allocate(name: string, owner: AllocationOwner): Promise<AllocateResult> {
    if (this.spec.offsetOf(name) === undefined) return 'out-of-range';
    return (await this.tryCreate(name, owner)) ? 'allocated' : 'taken';
  }

  /** Takes any free value, the upper band first, from a random start; undefined when the range is full. */
  async allocateNext(owner: AllocationOwner): Promise<string | undefined> {
    const used = new Set<number>();
    for (const name of (await this.list()).keys()) {
      const off = this.spec.offsetOf(name);
      if (off !== undefined) used.add(off);
    }
    const { count, staticBand } = this.spec;
    const bands: Array<[number, number]> = staticBand > 0 && staticBand < count ? [[staticBand, count], [0, staticBand]] : [[0, count]];
    for (const [lo, hi] of bands) {
      const width = hi - lo;
      const start = Math.floor(this.random() * width);
      for (let i = 0; i < width; i++) {
        const off = lo + ((start + i) % width);
        if (used.has(off)) continue;
        const name = this.spec.nameAt(off);
        if (await this.tryCreate(name, owner)) return name;
        used.add(off); // taken meanwhile by another server: look further
      }
    }
    return undefined;
  }

  /** Gives a value back; with an owner, only while it still belongs to that owner (never another's). */
  async release(name: string, owner?: AllocationOwner): Promise<void> {
    const key = this.spec.keyPrefix + name;
    const kv = await this.storage.get(key);
    if (!kv) return;
    if (owner && !sameOwner(decodeOwner(kv.value), owner)) return;
    try {
      await this.storage.delete(key, kv.modRevision);
    } catch (err) {
      if (!(err instanceof StorageError) || (err.code !== 'NotFound' && err.code !== 'Conflict')) throw err;
    }
  }

  /** Every allocated value of the range with its owner. */
  async list(): Promise<Map<string, AllocationOwner | undefined>> {
    const out = new Map<string, AllocationOwner | undefined>();
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.storage.list(this.spec.keyPrefix, { limit: 1000, startAfter });
      for (const kv of page.items) out.set(kv.key.slice(this.spec.keyPrefix.length), decodeOwner(kv.value));
      if (page.remaining === 0 || page.items.length === 0) return out;
      startAfter = page.items[page.items.length - 1].key;
    }
  }

  /** The owner of one value, or undefined when it is free. */
  async ownerOf(name: string): Promise<AllocationOwner | undefined> {
    const kv = await this.storage.get(this.spec.keyPrefix + name);
    return kv ? decodeOwner(kv.value) : undefined;
  }

  private async tryCreate(name: string, owner: AllocationOwner): Promise<boolean> {
    const value = Buffer.from(JSON.stringify(allocationObject(this.spec, name, owner)));
    try {
      await this.storage.create(this.spec.keyPrefix + name, value);
      return true;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'AlreadyExists') return false;
      throw err;
    }
  }
}

/**
 * The stored form of one allocation: an object with metadata, as every value in the store is (the
 * watch cache decodes every key it sees); for cluster IPs upstream's networking.k8s.io/v1 IPAddress
 * with spec.parentRef naming the Service.
 */
export function allocationObject(spec: RangeSpec, name: string, owner: AllocationOwner): Record<string, unknown> {
  const kind = spec.kind ?? 'IPAddress';
  return {
    apiVersion: kind === 'IPAddress' ? 'networking.k8s.io/v1' : 'internal.svc.io/v1',
    kind,
    metadata: { name },
    spec: { parentRef: { group: '', resource: spec.ownerResource ?? 'services', namespace: owner.namespace, name: owner.name, uid: owner.uid } },
  };
}

export function sameOwner(a: AllocationOwner | undefined, b: AllocationOwner): boolean {
  return !!a && a.namespace === b.namespace && a.name === b.name && (!a.uid || !b.uid || a.uid === b.uid);
}

function decodeOwner(value: Buffer): AllocationOwner | undefined {
  try {
    const ref = (JSON.parse(value.toString('utf8')) as { spec?: { parentRef?: { namespace?: unknown; name?: unknown; uid?: unknown } } }).spec?.parentRef;
    if (typeof ref?.namespace !== 'string' || typeof ref.name !== 'string') return undefined;
    return { namespace: ref.namespace, name: ref.name, uid: typeof ref.uid === 'string' ? ref.uid : undefined };
  } catch {
    return undefined;
  }
}
