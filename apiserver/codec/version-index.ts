/**
 * The index of the cache of encoded versions (encoded-cache.ts): key → a non-negative int32 (where
 * the entry lies). Numeric keys (the server's: a revision, or its negation, never 0) live in an
 * open-addressing table of two typed arrays with linear probing and deletion by backward shift,
 * so there are no tombstones. Why not a Map: the cache inserts a key never seen on every create
 * and deletes the oldest key as often, and V8's Map keeps deleted entries in its bucket chains
 * until it rehashes, so each lookup of a new key walked cold, scattered entries; in a profile of
 * the create's answer the Map's has, set and get were most of the cache's cost (about 1 µs a
 * create). Here a lookup reads one or two adjacent slots. Other keys (tests name versions by
 * strings) go to a Map.
 */
export class VersionIndex {
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;
  private used = 0;
  private readonly named = new Map<string | number, number>();

  constructor(initialSlots = 1024) {
    this.keys = new Float64Array(initialSlots);
    this.values = new Int32Array(initialSlots);
    this.mask = initialSlots - 1;
  }

  get size(): number {
    return this.used + this.named.size;
  }

  /** The value under key, or -1. */
  get(key: string | number): number {
    if (!fits(key)) return this.named.get(key) ?? -1;
    const i = this.slotOf(key);
    return i < 0 ? -1 : this.values[i];
  }

  /** Sets key's value (key must not be present: the cache checks with get first). */
  add(key: string | number, value: number): void {
    if (!fits(key)) {
      this.named.set(key, value);
      return;
    }
    if ((this.used + 1) * 2 > this.keys.length) this.grow();
    let i = home(key, this.mask);
    while (this.keys[i] !== 0) i = (i + 1) & this.mask;
    this.keys[i] = key;
    this.values[i] = value;
    this.used++;
  }

  delete(key: string | number): void {
    if (!fits(key)) {
      this.named.delete(key);
      return;
    }
    let hole = this.slotOf(key);
    if (hole < 0) return;
    const { keys, values, mask } = this;
    // Backward shift: each later key of the run that may sit in the hole (its home is not
    // cyclically within (hole, j]) moves there, so that every key stays reachable from its home.
    for (let j = (hole + 1) & mask; keys[j] !== 0; j = (j + 1) & mask) {
      const h = home(keys[j], mask);
      const between = hole <= j ? h > hole && h <= j : h > hole || h <= j;
      if (between) continue;
      keys[hole] = keys[j];
      values[hole] = values[j];
      hole = j;
    }
    keys[hole] = 0;
    this.used--;
  }

  private slotOf(key: number): number {
    const { keys, mask } = this;
    for (let i = home(key, mask); ; i = (i + 1) & mask) {
      const k = keys[i];
      if (k === key) return i;
      if (k === 0) return -1;
    }
  }

  private grow(): void {
    const { keys, values } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.values = new Int32Array(keys.length * 2);
    this.mask = keys.length * 2 - 1;
    this.used = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 0) this.add(keys[i], values[i]);
  }
}

/** A key the table holds: a non-zero integer a double holds exactly. */
function fits(key: string | number): key is number {
  return typeof key === 'number' && key !== 0 && Number.isSafeInteger(key);
}

/** The slot a key hashes to (Fibonacci hashing of its low and high 32 bits). */
function home(key: number, mask: number): number {
  const hi = Math.floor(key / 4294967296) | 0;
  return (Math.imul((key | 0) ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> 0) & mask;
}
