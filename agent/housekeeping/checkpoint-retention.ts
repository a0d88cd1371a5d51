/**
 * The retention policy for checkpoint archives in <root-dir>/checkpoints. Upstream's kubelet never
 * removes archives (it leaves that to operators, and users ran out of disk); we keep at most
 * maxPerContainer archives per pod container (the newest) and/or remove those older than maxAge.
 * The archive's age is the timestamp in its name (checkpoint-<pod>_<ns>-<container>-<RFC3339>.tar,
 * the time the checkpoint began). Files that do not look like our archives are left alone, and an
 * archive still being written is neither removed nor counted, whatever its name says.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { InFlightArchives } from '../checkpoint/checkpoint-handler';
import type { Log } from '../platform/logger';

export interface RetentionPolicy {
  /** Archives kept per pod container, the newest first; 0 means no limit. */
  maxPerContainer: number;
  /** Archives older than this (ms) are removed; 0 means no age limit. */
  maxAgeMs: number;
}

export interface ArchiveFile {
  path: string;
  /** checkpoint-<pod>_<ns>-<container>: the archives of one container share it. */
  group: string;
  /** When the checkpoint began (ms since the epoch), from the name. */
  time: number;
}

const ARCHIVE_NAME = /^(checkpoint-.+)-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\.tar$/;

/** Reads an archive's group and time from its file name; undefined for anything else. */
export function parseArchiveName(dir: string, name: string): ArchiveFile | undefined {
  const m = ARCHIVE_NAME.exec(name);
  if (!m) return undefined;
  const time = Date.parse(m[2]);
  if (Number.isNaN(time)) return undefined;
  return { path: path.join(dir, name), group: m[1], time };
}

/** The archives the policy removes (pure: the caller deletes them). */
export function planRetention(files: readonly ArchiveFile[], policy: RetentionPolicy, now: number, inFlight: ReadonlySet<string>): string[] {
  const remove = new Set<string>();
  const groups = new Map<string, ArchiveFile[]>();
  for (const f of files) {
    if (inFlight.has(f.path)) continue;
    const g = groups.get(f.group) ?? [];
    g.push(f);
    groups.set(f.group, g);
  }
  for (const g of groups.values()) {
    // Newest first; equal times (one second apart is the naming's resolution) ordered by path for a stable plan.
    g.sort((a, b) => b.time - a.time || (a.path < b.path ? 1 : a.path > b.path ? -1 : 0));
    g.forEach((f, i) => {
      if (policy.maxPerContainer > 0 && i >= policy.maxPerContainer) remove.add(f.path);
      if (policy.maxAgeMs > 0 && now - f.time > policy.maxAgeMs) remove.add(f.path);
    });
  }
  return [...remove].sort();
}

export interface CheckpointRetentionOptions {
  /** <root-dir>/checkpoints. */
  dir: string;
  policy: RetentionPolicy;
  now: () => number;
  inFlight: InFlightArchives;
  log: Log;
  /** Told how many archives each round removed (metrics); optional. */
  onRemoved?: (n: number) => void;
}

export interface RetentionReport {
  removed: string[];
  kept: number;
}

export class CheckpointRetention {
  constructor(private readonly o: CheckpointRetentionOptions) {}

  /** One round: lists the directory and removes what the policy says. Never rejects; a missing directory is an empty one. */
  async runOnce(): Promise<RetentionReport> {
    let names: string[];
    try {
      names = await readdir(this.o.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.o.log.warn({ dir: this.o.dir, error: (e as Error).message }, 'cannot list checkpoint archives');
      return { removed: [], kept: 0 };
    }
    const files = names.map((n) => parseArchiveName(this.o.dir, n)).filter((f): f is ArchiveFile => f !== undefined);
    // Read the in-flight set after listing: an archive started in between is then protected too.
    const plan = planRetention(files, this.o.policy, this.o.now(), this.o.inFlight.inFlight());
    const removed: string[] = [];
    for (const file of plan) {
      // A checkpoint may have begun on this very path since the plan was made (same container, same second).
      if (this.o.inFlight.inFlight().has(file)) continue;
      try {
        await rm(file, { force: true });
        removed.push(file);
      } catch (e) {
        this.o.log.warn({ archive: file, error: (e as Error).message }, 'cannot remove checkpoint archive');
      }
    }
    if (removed.length > 0) this.o.log.info({ removed: removed.length, policy: this.o.policy }, 'removed checkpoint archives by the retention policy');
    this.o.onRemoved?.(removed.length);
    return { removed, kept: files.length - removed.length };
  }
}
