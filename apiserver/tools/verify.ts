import { storeType } from '../storage/instrumented';
import type { Storage } from '../storage/storage';
import { valueHash } from './dump-format';
import { readAll } from './read-all';

/** One side of a verification: every key's value hash, read at one revision. */
export interface Snapshot {
  /** What was read ("sqlite ...", "etcd ...", "dump file"). */
  label: string;
  /** The revision it was read at (0 for a dump file: its header's revision is the source's). */
  revision: number;
  /** key → sha256 of its value, hex. */
  hashes: Map<string, string>;
}

export interface VerifyReport {
  source: { label: string; revision: number; keys: number };
  target: { label: string; revision: number; keys: number };
  /** Keys the target lacks, keys only the target has, keys whose values differ (each sorted, complete). */
  missing: string[];
  extra: string[];
  differing: string[];
  /** Per object type ("configmaps", "leases.coordination.svc.io"): keys in source and target. */
  types: Array<{ type: string; source: number; target: number }>;
  ok: boolean;
}

/** Reads every key of a store at one revision and hashes each value. */
export async function snapshotStore(storage: Storage, label: string): Promise<Snapshot> {
  const hashes = new Map<string, string>();
  let revision = 0;
  for await (const kv of readAll(storage, 500, (r) => (revision = r))) hashes.set(kv.key, valueHash(kv.value));
  return { label, revision, hashes };
}

/** Compares key sets and per-key value hashes; ok when both hold exactly the same keys with the same bytes. */
export function compareSnapshots(source: Snapshot, target: Snapshot): VerifyReport {
  const missing: string[] = [];
  const differing: string[] = [];
  const extra: string[] = [];
  const types = new Map<string, { source: number; target: number }>();
  const count = (key: string, side: 'source' | 'target'): void => {
    const t = storeType(key) || '(other)';
    const c = types.get(t) ?? { source: 0, target: 0 };
    c[side]++;
    types.set(t, c);
  };
  for (const [key, h] of source.hashes) {
    count(key, 'source');
    const other = target.hashes.get(key);
    if (other === undefined) missing.push(key);
    else if (other !== h) differing.push(key);
  }
  for (const key of target.hashes.keys()) {
    count(key, 'target');
    if (!source.hashes.has(key)) extra.push(key);
  }
  return {
    source: { label: source.label, revision: source.revision, keys: source.hashes.size },
    target: { label: target.label, revision: target.revision, keys: target.hashes.size },
    missing: missing.sort(),
    extra: extra.sort(),
    differing: differing.sort(),
    types: [...types].map(([type, c]) => ({ type, ...c })).sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)),
    ok: missing.length === 0 && extra.length === 0 && differing.length === 0,
  };
}

/** The human summary printed by import and verify (at most `show` keys listed per problem). */
export function formatReport(r: VerifyReport, show = 20): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const rev = (x: number) => (x > 0 ? ` at revision ${n(x)}` : '');
  const lines = [
    `source: ${r.source.label}${rev(r.source.revision)}: ${n(r.source.keys)} keys`,
    `target: ${r.target.label}${rev(r.target.revision)}: ${n(r.target.keys)} keys`,
  ];
  const width = Math.max(4, ...r.types.map((t) => t.type.length));
  lines.push(`  ${'type'.padEnd(width)}  source  target`);
  for (const t of r.types) lines.push(`  ${t.type.padEnd(width)}  ${String(t.source).padStart(6)}  ${String(t.target).padStart(6)}${t.source === t.target ? '' : '  <-- differs'}`);
  const list = (title: string, keys: string[]) => {
    lines.push(`${title}: ${n(keys.length)}`);
    for (const k of keys.slice(0, show)) lines.push(`  ${k}`);
    if (keys.length > show) lines.push(`  ... and ${n(keys.length - show)} more`);
  };
  list('keys missing from target', r.missing);
  list('keys only in target', r.extra);
  list('keys whose values differ (sha256)', r.differing);
  lines.push(
    r.ok
      ? `verification PASSED: ${n(r.source.keys)} keys, every value identical (sha256)`
      : `verification FAILED: ${n(r.missing.length)} missing, ${n(r.extra.length)} extra, ${n(r.differing.length)} differing`,
  );
  return lines.join('\n') + '\n';
}
