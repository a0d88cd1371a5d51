import { createHash } from 'node:crypto';

/**
 * The store dump: newline-delimited JSON, one header line, one line per key, one trailer line.
 * Values are base64 so every byte is copied verbatim. The trailer's count and digest let an import
 * refuse a truncated or altered file instead of half-migrating a cluster.
 */
export const DUMP_KIND = 'SvcStoreDump';
export const DUMP_END_KIND = 'SvcStoreDumpEnd';
export const DUMP_VERSION = 1;

export interface DumpHeader {
  kind: typeof DUMP_KIND;
  version: number;
  /** The source store's revision the dump was read at (its resourceVersions are meaningless elsewhere). */
  revision: number;
  /** What was dumped, for the summary ("sqlite /var/lib/svc-apiserver/store/state.db"). */
  source: string;
  createdAt: string;
}

export interface DumpRecord {
  key: string;
  /** The stored bytes, base64. */
  value: string;
}

export interface DumpTrailer {
  kind: typeof DUMP_END_KIND;
  count: number;
  /** sha256 over every record's key and value hash, in file order (see DumpDigest). */
  sha256: string;
}

export type DumpLine = { type: 'header'; header: DumpHeader } | { type: 'record'; key: string; value: Buffer } | { type: 'trailer'; trailer: DumpTrailer };

/** Thrown for a line that is not part of a valid dump. */
export class DumpFormatError extends Error {}

export function headerLine(h: Omit<DumpHeader, 'kind' | 'version'>): string {
  return JSON.stringify({ kind: DUMP_KIND, version: DUMP_VERSION, ...h }) + '\n';
}

export function recordLine(key: string, value: Buffer): string {
  return JSON.stringify({ key, value: value.toString('base64') }) + '\n';
}

export function trailerLine(count: number, sha256: string): string {
  return JSON.stringify({ kind: DUMP_END_KIND, count, sha256 }) + '\n';
}

/** Parses one line (without its newline); lineNo only for the error message. */
export function parseLine(line: string, lineNo: number): DumpLine {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new DumpFormatError(`line ${lineNo}: not JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new DumpFormatError(`line ${lineNo}: not a JSON object`);
  const o = v as Record<string, unknown>;
  if (typeof o.key === 'string') {
    if (typeof o.value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(o.value)) throw new DumpFormatError(`line ${lineNo}: key ${o.key} has no base64 value`);
    return { type: 'record', key: o.key, value: Buffer.from(o.value, 'base64') };
  }
  if (o.kind === DUMP_KIND) {
    if (o.version !== DUMP_VERSION) throw new DumpFormatError(`line ${lineNo}: dump version ${String(o.version)} is not supported (this build reads version ${DUMP_VERSION})`);
    if (typeof o.revision !== 'number' || typeof o.source !== 'string') throw new DumpFormatError(`line ${lineNo}: malformed header`);
    return { type: 'header', header: o as unknown as DumpHeader };
  }
  if (o.kind === DUMP_END_KIND) {
    if (typeof o.count !== 'number' || typeof o.sha256 !== 'string') throw new DumpFormatError(`line ${lineNo}: malformed trailer`);
    return { type: 'trailer', trailer: o as unknown as DumpTrailer };
  }
  throw new DumpFormatError(`line ${lineNo}: neither a header, a record nor a trailer`);
}

/** sha256 of a value, hex: the per-key hash the verification compares. */
export function valueHash(value: Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** The running digest of a dump: every key and its value hash, in order. */
export class DumpDigest {
  private readonly h = createHash('sha256');
  count = 0;

  /** Adds one record. */
  add(key: string, valueSha256: string): void {
    this.h.update(`${key}\n${valueSha256}\n`);
    this.count++;
  }

  /** The final hex digest (call once). */
  hex(): string {
    return this.h.digest('hex');
  }
}
