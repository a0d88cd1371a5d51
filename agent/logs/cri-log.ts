/**
 * The CRI container log format runtimes write (upstream kubelet/kuberuntime/logs): one line per
 * chunk, "<RFC 3339 nano timestamp> <stdout|stderr> <tag> <content>", where the tag is F for the
 * end of a line and P for a partial line that continues in the next record (more tags may follow
 * after ':'). Upstream prints a partial record without a newline, so joined records read as the
 * original line.
 */

export type Stream = 'stdout' | 'stderr';

export interface LogRecord {
  /** Milliseconds since the epoch. */
  time: number;
  /** The timestamp as written (nanosecond precision kept for output with timestamps=true). */
  timestamp: string;
  stream: Stream;
  /** True for a P record: the line continues in the next record. */
  partial: boolean;
  /** Content, without the newline. */
  content: Buffer;
}

/** Parses one line (without its newline); undefined for a line not in CRI format. */
export function parseCriLine(line: Buffer): LogRecord | undefined {
  const sp1 = line.indexOf(0x20);
  if (sp1 <= 0) return undefined;
  const sp2 = line.indexOf(0x20, sp1 + 1);
  if (sp2 < 0) return undefined;
  const timestamp = line.subarray(0, sp1).toString('latin1');
  const stream = line.subarray(sp1 + 1, sp2).toString('latin1');
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const time = Date.parse(timestamp);
  if (!Number.isFinite(time)) return undefined;
  let sp3 = line.indexOf(0x20, sp2 + 1);
  // A record with empty content may end right after the tag.
  if (sp3 < 0) sp3 = line.length;
  const tag = line.subarray(sp2 + 1, sp3).toString('latin1');
  const first = tag.split(':')[0];
  if (first !== 'P' && first !== 'F') return undefined;
  return { time, timestamp, stream, partial: first === 'P', content: line.subarray(Math.min(sp3 + 1, line.length)) };
}

/** Splits a buffer into complete lines; the remainder (no newline yet) is returned separately. */
export function splitLines(buf: Buffer): { lines: Buffer[]; rest: Buffer } {
  const lines: Buffer[] = [];
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, start);
    if (nl < 0) break;
    lines.push(buf.subarray(start, nl));
    start = nl + 1;
  }
  return { lines, rest: buf.subarray(start) };
}
