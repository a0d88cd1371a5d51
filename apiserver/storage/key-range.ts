/**
 * Key ranges in byte order. Both SQLite (BINARY collation compares UTF-8 bytes) and etcd order keys
 * by their UTF-8 bytes, which differs from JavaScript's UTF-16 string order for non-BMP characters,
 * so every range bound is computed on bytes.
 */

/** The smallest byte string greater than every key that starts with prefix (the range end). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix, 'utf8');
  // Valid UTF-8 never contains 0xff, so [0xff] bounds everything and incrementing the last byte
  // never overflows (a UTF-8 byte is at most 0xf4).
  if (b.length === 0) return Buffer.from([0xff]);
  b[b.length - 1] += 1;
  return b;
}

/** Compares two keys in storage (UTF-8 byte) order: negative, zero or positive. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
