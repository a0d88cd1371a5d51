/**
 * The audit log backend (--audit-log-path): one JSON event per line, appended to a file created
 * with mode 0600 (audit events name users and carry request bodies) or written to stdout for "-".
 * Writes are asynchronous from a bounded in-memory queue, so a slow disk never holds a request
 * up; when the queue is full, events are dropped and counted (upstream's blocking mode would
 * stall requests instead). Rotation follows upstream's lumberjack: past --audit-log-maxsize
 * megabytes the file is renamed to <name>-<timestamp><ext> and a new one started; backups beyond
 * --audit-log-maxbackup or older than --audit-log-maxage days are removed (0: no limit).
 */
import { closeSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { AuditEvent } from './request-audit';

export interface LogBackendOptions {
  path: string;
  maxSizeMB: number;
  maxBackups: number;
  maxAgeDays: number;
  /** Queue bound in events (upstream's log buffer default is 10000). */
  bufferSize?: number;
  now?: () => Date;
  /** Counts events that could not be written (dropped or failed), for apiserver_audit_error_total{plugin="log"}. */
  onError?: (count: number, err?: unknown) => void;
}

export class LogBackend {
  private queue: string[] = [];
  private fd: number | undefined;
  private size = 0;
  private scheduled = false;
  private readonly bufferSize: number;
  private readonly now: () => Date;

  constructor(private readonly o: LogBackendOptions) {
    this.bufferSize = o.bufferSize ?? 10_000;
    this.now = o.now ?? (() => new Date());
  }

  emit(ev: AuditEvent): void {
    if (this.queue.length >= this.bufferSize) {
      this.o.onError?.(1);
      return;
    }
    this.queue.push(JSON.stringify(ev) + '\n');
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes what is queued (also called on shutdown so nothing acknowledged is lost). */
  flush(): void {
    this.scheduled = false;
    const lines = this.queue;
    this.queue = [];
    if (!lines.length) return;
    try {
      if (this.o.path === '-') {
        process.stdout.write(lines.join(''));
        return;
      }
      this.open();
      for (const line of lines) {
        const bytes = Buffer.byteLength(line);
        if (this.o.maxSizeMB > 0 && this.size > 0 && this.size + bytes > this.o.maxSizeMB * 1024 * 1024) this.rotate();
        writeSync(this.fd!, line);
        this.size += bytes;
      }
    } catch (err) {
      this.o.onError?.(lines.length, err);
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    if (this.fd !== undefined) return;
    this.fd = openSync(this.o.path, 'a', 0o600);
    this.size = statSync(this.o.path).size;
  }

  private rotate(): void {
    closeSync(this.fd!);
    this.fd = undefined;
    const ext = extname(this.o.path);
    const base = basename(this.o.path, ext);
    // lumberjack's backup name: <name>-2006-01-02T15-04-05.000<ext>
    const stamp = this.now().toISOString().replace(/:/g, '-').replace(/Z$/, '');
    renameSync(this.o.path, join(dirname(this.o.path), `${base}-${stamp}${ext}`));
    this.prune(base, ext);
    this.open();
  }

  private prune(base: string, ext: string): void {
    const dir = dirname(this.o.path);
    const backups = readdirSync(dir)
      .filter((f) => f.startsWith(`${base}-`) && f.endsWith(ext) && f !== basename(this.o.path))
      .sort()
      .reverse();
    const cutoff = this.o.maxAgeDays > 0 ? this.now().getTime() - this.o.maxAgeDays * 86_400_000 : -Infinity;
    backups.forEach((f, i) => {
      const old = statSync(join(dir, f)).mtimeMs < cutoff;
      if ((this.o.maxBackups > 0 && i >= this.o.maxBackups) || old) unlinkSync(join(dir, f));
    });
  }
}
