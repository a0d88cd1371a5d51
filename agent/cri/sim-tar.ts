/**
 * A minimal ustar writer for the simulator's checkpoint archives: regular files only, written
 * whole. Real runtimes (CRI-O) write CRIU images plus config dumps; ours holds the dumps only, so
 * the agent's archive handling can be tested without CRIU.
 */

export interface TarEntry {
  name: string;
  data: Buffer | string;
  /** Seconds since the epoch. */
  mtime: number;
  mode?: number;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width includes the terminating NUL.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtime: number, mode: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry name too long: ${name}`);
  const h = Buffer.alloc(BLOCK, 0);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum counts as spaces while summing
  h.write('0', 156, 1, 'ascii'); // regular file
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 8, 'ascii');
  return h;
}

/** The archive bytes for the entries, with the two zero blocks that end a tar. */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : e.data;
    parts.push(header(e.name, data.length, e.mtime, e.mode ?? 0o600), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(parts);
}
