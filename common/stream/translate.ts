/**
 * Joins a client's exec session (any protocol, ./exec-streams.ts) to an exec on a runtime's SPDY
 * stream server, as upstream's kube-apiserver StreamTranslator joins WebSocket clients to the
 * kubelet's SPDY: stdin, stdout, stderr and resizes copied, the runtime's exit status handed on.
 * Either side ending ends the other.
 */
import type { Readable, Writable } from 'node:stream';
import type { ExecStreams } from './exec-streams';
import { encodeTerminalSize, parseExitStatus, type ExitResult } from './remotecommand';
import type { ExecClientStreams } from './spdy-client';
import type { SpdySession } from './spdy-connection';

function copy(from: Readable | undefined, to: Writable | undefined): Promise<void> {
  if (!from) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => resolve();
    from.on('end', done);
    from.on('close', done);
    from.on('error', done);
    if (to) from.pipe(to, { end: false });
    else from.resume();
  });
}

/** Runs the translation; resolves how the runtime's command ended. */
export async function translateExec(client: ExecStreams, runtime: ExecClientStreams, session: SpdySession): Promise<ExitResult> {
  const abort = (): void => session.destroy();
  client.signal.addEventListener('abort', abort, { once: true });
  if (client.stdin && runtime.stdin) {
    const rin = runtime.stdin;
    client.stdin.pipe(rin);
  }
  client.onResize((size) => runtime.resize?.write(encodeTerminalSize(size)));
  const status: Buffer[] = [];
  runtime.error.on('data', (b: Buffer) => status.push(b));
  await Promise.all([copy(runtime.stdout, client.stdout), copy(runtime.stderr, client.stderr), copy(runtime.error, undefined)]);
  client.signal.removeEventListener('abort', abort);
  session.close();
  // As client-go: the status is whatever the error stream carried before it ended (the runtime
  // closes the connection after writing it, without a FIN); nothing means success.
  return parseExitStatus(Buffer.concat(status));
}
