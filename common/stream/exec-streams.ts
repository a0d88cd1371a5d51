/**
 * The protocol-independent side of one exec or attach: the streams the client asked for, its
 * terminal resizes, and the end (an exit status written back, then the connection closed).
 * ./ws-exec.ts and ./spdy-exec.ts make one from a client's WebSocket or SPDY connection; whoever
 * runs the command (the runtime, the simulator) sees only this.
 */
import type { Readable, Writable } from 'node:stream';
import type { ExitResult, TerminalSize } from './remotecommand';

/** What the client asked for (the query's stdin, stdout, stderr and tty). */
export interface ExecOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export interface ExecStreams {
  /** The client's input; ends when the client closes stdin (or goes away). */
  stdin?: Readable;
  stdout?: Writable;
  /** Absent with a tty (its output is all on stdout), as upstream. */
  stderr?: Writable;
  tty: boolean;
  /** The negotiated protocol. */
  protocol: string;
  /** Registers for terminal sizes, in the order the client sends them. */
  onResize(cb: (size: TerminalSize) => void): void;
  /** Writes the exit status on the error stream, ends every stream and closes the connection. Never rejects. */
  finish(result: ExitResult, cmd?: readonly string[]): Promise<void>;
  /** Aborted when the client goes away (or the connection is closed for any reason). */
  readonly signal: AbortSignal;
}

/** Reads the exec query (`command` repeated, input/output/error (or stdin/stdout/stderr) and tty booleans; "1"/"true" and friends, as the kubelet's ParseBool). */
export function execOptionsFromQuery(q: URLSearchParams): ExecOptions & { command: string[] } {
  const bool = (name: string): boolean => {
    const v = q.get(name);
    if (v === null) return false;
    return ['', '1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
  };
  const tty = bool('tty');
  // With a tty stderr is merged into stdout: upstream drops a stderr request.
  // The kubelet's own names are input, output and error (upstream's ExecStdinParam & co., what the
  // API server sends); stdin, stdout and stderr are accepted too.
  const either = (kubelet: string, alias: string) => bool(kubelet) || bool(alias);
  return { command: q.getAll('command'), stdin: either('input', 'stdin'), stdout: either('output', 'stdout'), stderr: either('error', 'stderr') && !tty, tty };
}

/** Ends a writable (with an optional last chunk); resolves when it finished, failed or was destroyed. Never rejects. */
export function endWritable(w: Writable | undefined, last?: Buffer | string): Promise<void> {
  if (!w || w.destroyed || w.writableFinished) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      w.off('close', done);
      w.off('error', done);
      resolve();
    };
    w.once('close', done);
    w.once('error', done);
    if (last === undefined) w.end(done);
    else w.end(last, done);
  });
}
