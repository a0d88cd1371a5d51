/**
 * exec and attach over SPDY (stream protocols v4, v3, v2 and channel.k8s.io, upstream's kubelet
 * remotecommand server): after the upgrade the client opens one stream per requested channel, each
 * SYN_STREAM naming it in a `streamType` header (error, stdin, stdout, stderr, resize); the server
 * replies to each and starts once all it expects have arrived (error always; stdin, stdout and
 * stderr as requested; resize with a tty from v3 on), or gives up after the creation timeout. The
 * exit status goes on the error stream (Status JSON from v4, plain text before), then the session
 * closes.
 */
import type { Duplex } from 'node:stream';
import { endWritable, type ExecOptions, type ExecStreams } from './exec-streams';
import { JsonObjectSplitter, STREAM_PROTOCOL_V1, STREAM_PROTOCOL_V2, parseTerminalSize, type ExitResult, type StreamType, type TerminalSize } from './remotecommand';
import { SpdySession } from './spdy-connection';
import { headerValue } from './spdy-header-codec';
import type { SpdyStream } from './spdy-stream';
import { errorBody } from './ws-exec';
import { RstStatus } from './spdy-frame';

/** The exec protocols served over SPDY, newest first. */
export const SPDY_EXEC_PROTOCOLS: readonly string[] = ['v4.channel.k8s.io', 'v3.channel.k8s.io', STREAM_PROTOCOL_V2, STREAM_PROTOCOL_V1];

export interface SpdyExecOptions extends ExecOptions {
  protocol: string;
  /** How long the client has to open its streams (upstream's streamCreationTimeout, 30 s). */
  streamCreationTimeoutMs: number;
  /** Timers, injectable for tests. */
  setTimer?: (fn: () => void, ms: number) => { unref?: () => void };
  clearTimer?: (t: unknown) => void;
}

/** Why the streams never came together. */
export class StreamCreationError extends Error {}

/**
 * Starts a SPDY session on the upgraded socket and resolves the exec streams once the client has
 * opened them. Rejects StreamCreationError (the session is then closed) on timeout or when the
 * client goes away first.
 */
export function serveSpdyExec(socket: Duplex, o: SpdyExecOptions): Promise<ExecStreams> {
  const version = /^v(\d+)\./.exec(o.protocol);
  const v = version ? Number(version[1]) : 1;
  const expected = new Set<StreamType>(['error']);
  if (o.stdin) expected.add('stdin');
  if (o.stdout) expected.add('stdout');
  if (o.stderr) expected.add('stderr');
  if (o.tty && v >= 3) expected.add('resize');
  const got = new Map<StreamType, SpdyStream>();
  const ac = new AbortController();
  const setTimer = o.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = o.clearTimer ?? ((t: unknown) => clearTimeout(t as NodeJS.Timeout));

  return new Promise<ExecStreams>((resolve, reject) => {
    let settled = false;
    const fail = (message: string): void => {
      if (settled) return;
      settled = true;
      clearTimer(timer);
      session.destroy();
      reject(new StreamCreationError(message));
    };
    const session = new SpdySession(socket, {
      server: true,
      onStream: (stream) => {
        const type = headerValue(stream.headers, 'streamtype') as StreamType | undefined;
        if (!type || !expected.has(type) || got.has(type)) {
          stream.reset(RstStatus.PROTOCOL_ERROR);
          return;
        }
        got.set(type, stream);
        void stream.reply();
        if (got.size === expected.size && !settled) {
          settled = true;
          clearTimer(timer);
          resolve(build(session, got, o, ac));
        }
      },
    });
    session.on('close', () => {
      ac.abort();
      fail('the client went away before opening its streams');
    });
    const timer = setTimer(() => fail(`timed out waiting for the client to create streams (have ${[...got.keys()].join(', ') || 'none'} of ${[...expected].join(', ')})`), o.streamCreationTimeoutMs);
    timer.unref?.();
  });
}

function build(session: SpdySession, got: Map<StreamType, SpdyStream>, o: SpdyExecOptions, ac: AbortController): ExecStreams {
  const resizeHandlers: ((s: TerminalSize) => void)[] = [];
  const resize = got.get('resize');
  if (resize) {
    const splitter = new JsonObjectSplitter();
    resize.on('data', (b: Buffer) => {
      for (const doc of splitter.push(b.toString('utf8'))) {
        const size = parseTerminalSize(doc);
        if (size) for (const h of resizeHandlers) h(size);
      }
    });
  }
  // What the client never reads must not hold the session: stdout/stderr of ours are written only.
  for (const s of got.values()) s.on('error', () => undefined);
  let finished = false;
  const stdout = got.get('stdout');
  const stderr = got.get('stderr');
  const stdin = got.get('stdin');
  return {
    ...(stdin ? { stdin } : {}),
    ...(stdout ? { stdout } : {}),
    ...(stderr ? { stderr } : {}),
    tty: o.tty,
    protocol: o.protocol,
    signal: ac.signal,
    onResize: (cb) => resizeHandlers.push(cb),
    async finish(result: ExitResult, cmd: readonly string[] = []) {
      if (finished) return;
      finished = true;
      await Promise.all([endWritable(stdout), endWritable(stderr)]);
      await endWritable(got.get('error'), errorBody(result, cmd, o.protocol === 'v4.channel.k8s.io'));
      session.close();
    },
  };
}
