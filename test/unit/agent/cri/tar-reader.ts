/** Reads the regular files of a ustar archive, checking each header checksum, for checkpoint tests. */
export interface TarFile {
  name: string;
  mode: number;
  data: Buffer;
}

export function readTar(buf: Buffer): TarFile[] {
  const out: TarFile[] = [];
  let off = 0;
  while (off + 512 <= buf.length) {
    const h = buf.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const field = (start: number, len: number) => h.subarray(start, start + len).toString('ascii').replace(/\0.*$/s, '').trim();
    const sum = h.reduce((n, b, i) => n + (i >= 148 && i < 156 ? 32 : b), 0);
    if (parseInt(field(148, 8), 8) !== sum) throw new Error(`bad tar checksum at ${off}`);
    if (field(257, 6) !== 'ustar') throw new Error('not a ustar archive');
    const size = parseInt(field(124, 12), 8);
    out.push({ name: field(0, 100), mode: parseInt(field(100, 8), 8), data: Buffer.from(buf.subarray(off + 512, off + 512 + size)) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}
