/**
 * exec and attach over a WebSocket (subprotocols v5/v4/v3/v2/channel.k8s.io and the base64
 * variants): channel 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize (./ws-channel.ts). The client's
 * stdin ends with v5's close signal for channel 0, or with the connection on older protocols.
 */
import { PassThrough, Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import { endWritable, type ExecOptions, type ExecStreams } from './exec-streams';
import { ERROR, JsonObjectSplitter, RESIZE, STDERR, STDIN, STDOUT, exitStatus, parseTerminalSize, type ExitResult, type TerminalSize } from './remotecommand';
import { decodeChannelMessage, encodeChannelMessage, wsProtocolTraits } from './ws-channel';

/** A writable whose chunks go out as messages on one channel, each written before the next is taken. */
function channelWriter(ws: WebSocket, channel: number, base64: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (ws.readyState !== ws.OPEN) {
        cb(new Error('the client went away'));
        return;
      }
      ws.send(encodeChannelMessage(channel, chunk, base64), (err) => cb(err ?? null));
    },
  });
}

/**
 * Why an exec's signal is aborted once its WebSocket is gone (closed or failed): one shared reason,
 * since abort() without one builds a DOMException with a stack trace each time (about 50 µs per exec).
 */
const WEBSOCKET_GONE = new Error('the WebSocket is closed');

/**
 * Serves one exec/attach on an open WebSocket whose subprotocol is `protocol`. `transport`, the
 * connection under ws, is ended right after our close frame, as upstream's (x/net/websocket's
 * Close writes the close frame and closes the connection), rather than after the client's close
 * frame: a client that misses ours (Debian's Python client selects on its socket, not on the TLS
 * buffer holding the frame) would otherwise hang until ws's 30 s close timer.
 */
export function serveWebSocketExec(ws: WebSocket, protocol: string, o: ExecOptions, transport?: { end(): void }): ExecStreams {
  const traits = wsProtocolTraits(protocol);
  const ac = new AbortController();
  const stdin = o.stdin ? new PassThrough() : undefined;
  const resizeHandlers: ((s: TerminalSize) => void)[] = [];
  const splitter = new JsonObjectSplitter();
  let finished = false;

  ws.on('message', (msg: Buffer, isBinary: boolean) => {
    let m;
    try {
      m = decodeChannelMessage(isBinary ? msg : msg.toString('utf8'), traits);
    } catch {
      ws.close(1002, 'malformed channel message');
      return;
    }
    if (m.kind === 'close') {
      if (m.channel === STDIN) stdin?.end();
      return;
    }
    if (m.channel === STDIN && stdin && !stdin.writableEnded) stdin.write(m.data);
    else if (m.channel === RESIZE && traits.resize) {
      for (const doc of splitter.push(m.data.toString('utf8'))) {
        const size = parseTerminalSize(doc);
        if (size) for (const h of resizeHandlers) h(size);
      }
    }
  });
  ws.on('close', () => {
    stdin?.end();
    ac.abort(WEBSOCKET_GONE);
  });
  ws.on('error', () => ac.abort(WEBSOCKET_GONE));

  const stdout = o.stdout ? channelWriter(ws, STDOUT, traits.base64) : undefined;
  const stderr = o.stderr ? channelWriter(ws, STDERR, traits.base64) : undefined;
  return {
    ...(stdin ? { stdin } : {}),
    ...(stdout ? { stdout } : {}),
    ...(stderr ? { stderr } : {}),
    tty: o.tty,
    protocol,
    signal: ac.signal,
    onResize: (cb) => resizeHandlers.push(cb),
    async finish(result: ExitResult, cmd: readonly string[] = []) {
      if (finished) return;
      finished = true;
      // Output first, then the status: the client stops reading at the status.
      await Promise.all([endWritable(stdout), endWritable(stderr)]);
      if (ws.readyState === ws.OPEN) {
        const body = errorBody(result, cmd, traits.statusErrors);
        if (body !== undefined) await new Promise<void>((resolve) => ws.send(encodeChannelMessage(ERROR, Buffer.from(body), traits.base64), () => resolve()));
        ws.close(1000);
        // The close frame is queued on the transport already (ws writes it at once): the end follows it.
        transport?.end();
      }
    },
  };
}

/** What the error channel carries: Status JSON (v4+), else the error's text; nothing for a plain success on old protocols. */
export function errorBody(result: ExitResult, cmd: readonly string[], statusErrors: boolean): string | undefined {
  if (statusErrors) return JSON.stringify(exitStatus(result, cmd));
  if ('error' in result) return result.error;
  if (result.exitCode === 0) return undefined;
  return `command terminated with non-zero exit code: error executing command [${cmd.join(' ')}], exit code ${result.exitCode}`;
}
