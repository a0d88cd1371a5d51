/**
 * The audit log backend (--audit-log-path): one JSON event per line, appended to a file created
 * with mode 0600 (audit events name users and carry request bodies) or written to stdout for "-".
 * Events are queued (bounded) and written in batches: what accumulated since the last batch goes
 * out in one asynchronous write (fs.write, off the event loop), so neither a slow disk nor a
 * syscall per event holds requests up; while a batch is being written the next one accumulates.
 * When the queue is full, events are dropped and counted (upstream's blocking mode would stall
 * requests instead). flush() resolves once everything queued before it is written: the server
 * awaits it at shutdown, so no event of an answered request is lost. Rotation follows upstream's lumberjack: past --audit-log-maxsize
 * megabytes the file is renamed to <name>-<timestamp><ext> and a new one started; backups beyond
 * --audit-log-maxbackup or older than --audit-log-maxage days are removed (0: no limit).
 */
import { closeSync, openSync, readdirSync, renameSync, statSync, unlinkSync, write } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { AuditEvent } from './request-audit';

export interface LogBackendOptions {
  path: string;
  maxSizeMB: number;
  maxBackups: number;
  maxAgeDays: number;
  /** Queue bound in events (upstream's log buffer default is 10000). */
  bufferSize?: number;
  /**
   * Runs fn once the next batch is due (default: 5 ms after the first event queued, so a batch
   * gathers the events of many requests and the file sees one write for them; injected in tests).
   */
  schedule?: (fn: () => void) => void;
  now?: () => Date;
  /** Counts events that could not be written (dropped or failed), for apiserver_audit_error_total{plugin="log"}. */
  onError?: (count: number, err?: unknown) => void;
}

/** How long a batch gathers events before it is written (the events' way to disk, never a request's). */
const BATCH_WAIT_MS = 5;
/** A batch this large is written at once, without waiting (a burst must not fill the queue). */
const BATCH_EVENTS = 512;

/** One write of a batch, and whether the file is rotated before it. */
interface Chunk {
  text: string;
  rotateFirst: boolean;
}

export class LogBackend {
  private queue: string[] = [];
  private fd: number | undefined;
  private size = 0;
  private scheduled = false;
  private burst = false;
  /** A batch is being written; the queue waits for it. */
  private writing = false;
  /** flush() callers waiting for the queue to be written. */
  private waiters: Array<() => void> = [];
  private readonly bufferSize: number;
  private readonly now: () => Date;
  private readonly schedule: (fn: () => void) => void;

  constructor(private readonly o: LogBackendOptions) {
    this.bufferSize = o.bufferSize ?? 10_000;
    this.now = o.now ?? (() => new Date());
    this.schedule = o.schedule ?? ((fn) => void setTimeout(fn, BATCH_WAIT_MS));
  }

  emit(ev: AuditEvent): void {
    if (this.queue.length >= this.bufferSize) {
      this.o.onError?.(1);
      return;
    }
    this.queue.push(JSON.stringify(ev) + '\n');
    if (this.writing) return; // the batch under way starts the next when it ends
    if (this.queue.length >= BATCH_EVENTS) {
      // A burst: write now rather than let the queue approach its bound.
      if (!this.burst) {
        this.burst = true;
        setImmediate(() => ((this.burst = false), this.next()));
      }
    } else if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.next());
    }
  }

  /** Writes what is queued; resolves once it (and any batch under way) is written (shutdown awaits it, so nothing acknowledged is lost). */
  flush(): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.next();
    return done;
  }

  /** Flushes, then closes the file. */
  async close(): Promise<void> {
    await this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Starts writing the queue as one batch unless a batch is under way (its end starts the next). */
  private next(): void {
    this.scheduled = false;
    if (this.writing) return;
    const lines = this.queue;
    this.queue = [];
    if (!lines.length) {
      for (const w of this.waiters.splice(0)) w();
      return;
    }
    this.writing = true;
    const done = (err?: unknown) => {
      if (err) this.o.onError?.(lines.length, err);
      this.writing = false;
      this.next();
    };
    if (this.o.path === '-') {
      process.stdout.write(lines.join(''), done);
      return;
    }
    let chunks: Chunk[];
    try {
      this.open();
      chunks = this.chunks(lines);
    } catch (err) {
      done(err);
      return;
    }
    this.writeChunks(chunks, done);
  }

  /** The batch as few writes as rotation allows: a new chunk wherever the file would pass --audit-log-maxsize. */
  private chunks(lines: string[]): Chunk[] {
    const max = this.o.maxSizeMB * 1024 * 1024;
    const out: Chunk[] = [];
    let current: string[] = [];
    let rotateFirst = false;
    let size = this.size;
    for (const line of lines) {
      const n = Buffer.byteLength(line);
      if (max > 0 && size > 0 && size + n > max) {
        if (current.length) out.push({ text: current.join(''), rotateFirst });
        current = [];
        rotateFirst = true;
        size = 0;
      }
      current.push(line);
      size += n;
    }
    if (current.length) out.push({ text: current.join(''), rotateFirst });
    return out;
  }

  /** Writes the chunks in order, rotating where a chunk asks for it (rare: the rename and pruning are synchronous). */
  private writeChunks(chunks: Chunk[], done: (err?: unknown) => void): void {
    const chunk = chunks.shift();
    if (!chunk) return done();
    try {
      if (chunk.rotateFirst) this.rotate();
    } catch (err) {
      return done(err);
    }
    this.writeAll(Buffer.from(chunk.text, 'utf8'), 0, (err) => (err ? done(err) : this.writeChunks(chunks, done)));
  }

  /** Writes buf from offset to its end (a short write continues where it stopped). */
  private writeAll(buf: Buffer, offset: number, done: (err?: unknown) => void): void {
    write(this.fd!, buf, offset, buf.length - offset, null, (err, written) => {
      if (err) return done(err);
      this.size += written;
      if (offset + written < buf.length) this.writeAll(buf, offset + written, done);
      else done();
    });
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
