/**
 * Reads a container's CRI log file for a log request, as upstream's kuberuntime ReadLogs:
 * sinceTime/sinceSeconds drop older records, tailLines keeps the last N lines (a run of partial
 * records and its final record is one line), timestamps prefixes each record with its time,
 * limitBytes cuts the output. With follow, the file is polled for growth and the stream ends once
 * the container no longer runs and everything written has been sent (or the caller goes away).
 */
import { open, readFile, stat } from 'node:fs/promises';
import type { Clock } from '../platform/clock';
import { parseCriLine, splitLines, type LogRecord } from './cri-log';
import type { LogOptions } from './log-options';

export interface ReadLogsDeps {
  clock: Clock;
  /** Whether the container still runs; following ends when it does not. Never rejects. */
  isRunning: () => Promise<boolean>;
  /** How often a followed file is checked for growth (default 250 ms). */
  pollMs?: number;
}

/** Sink for output; may apply back-pressure by resolving late. */
export type LogWriter = (chunk: Buffer) => void | Promise<void>;

class Output {
  private sent = 0;
  constructor(
    private readonly write: LogWriter,
    private readonly o: LogOptions,
  ) {}

  get full(): boolean {
    return this.o.limitBytes !== undefined && this.sent >= this.o.limitBytes;
  }

  async record(r: LogRecord): Promise<void> {
    if (this.full) return;
    if (this.o.sinceMs !== undefined && r.time < this.o.sinceMs) return;
    const parts: Buffer[] = [];
    if (this.o.timestamps) parts.push(Buffer.from(`${r.timestamp} `));
    parts.push(r.content);
    if (!r.partial) parts.push(Buffer.from('\n'));
    let chunk = Buffer.concat(parts);
    if (this.o.limitBytes !== undefined) chunk = chunk.subarray(0, this.o.limitBytes - this.sent);
    this.sent += chunk.length;
    await this.write(chunk);
  }
}

/** Records of whole lines, keeping only the last `n` lines. */
function tail(records: LogRecord[], n: number): LogRecord[] {
  if (n === 0) return [];
  let lines = 0;
  let i = records.length - 1;
  // A trailing run of partial records (line not finished yet) counts as a line.
  for (; i >= 0; i--) {
    const r = records[i];
    if (!r.partial || i === records.length - 1) {
      if (lines === n) break;
      lines++;
    }
  }
  // i is now the last record of the newest line that is not kept.
  return records.slice(i + 1);
}

function parseAll(lines: Buffer[]): LogRecord[] {
  const out: LogRecord[] = [];
  for (const l of lines) {
    const r = parseCriLine(l);
    if (r) out.push(r);
  }
  return out;
}

/** Writes the log per the options; resolves when done (or the signal aborts). Rejects with the fs error if the file cannot be read. */
export async function readContainerLogs(file: string, o: LogOptions, write: LogWriter, deps: ReadLogsDeps, signal?: AbortSignal): Promise<void> {
  const out = new Output(write, o);
  const initial = await readFile(file);
  let offset = initial.length;
  const { lines, rest } = splitLines(initial);
  let pending = rest;
  let records = parseAll(lines);
  if (o.tailLines !== undefined) records = tail(records, o.tailLines);
  for (const r of records) {
    if (signal?.aborted || out.full) return;
    await out.record(r);
  }
  if (!o.follow) return;

  const pollMs = deps.pollMs ?? 250;
  let idle = 0;
  while (!signal?.aborted && !out.full) {
    const st = await stat(file).catch(() => undefined);
    if (st && st.size < offset) {
      // Truncated or replaced (rotation): start over from its beginning.
      offset = 0;
      pending = Buffer.alloc(0);
    }
    if (st && st.size > offset) {
      idle = 0;
      const fh = await open(file, 'r');
      try {
        const buf = Buffer.alloc(st.size - offset);
        const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
        offset += bytesRead;
        const split = splitLines(Buffer.concat([pending, buf.subarray(0, bytesRead)]));
        pending = split.rest;
        for (const r of parseAll(split.lines)) {
          if (signal?.aborted || out.full) return;
          await out.record(r);
        }
      } finally {
        await fh.close();
      }
      continue;
    }
    // Nothing new: every second, check whether the container still runs.
    if (++idle % Math.max(1, Math.round(1000 / pollMs)) === 0 && !(await deps.isRunning())) {
      const last = await stat(file).catch(() => undefined);
      if (!last || last.size <= offset) return;
      continue;
    }
    if (!(await deps.clock.sleep(pollMs, signal))) return;
  }
}
