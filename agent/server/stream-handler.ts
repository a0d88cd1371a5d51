/**
 * The agent's streaming endpoints (upstream's kubelet: /exec, /attach, /portForward, /run; spec
 * 4.2 and Appendix A: authorized as nodes/proxy by the server before they get here). Each asks
 * the runtime (CRI Exec, Attach, PortForward) for its stream URL; a runtime that serves streams
 * in-process (the simulator) is spoken to here in the client's protocol — WebSocket
 * (common/stream/ws-exec.ts, v5 to channel.k8s.io; port-forward v4 and the SPDY tunnel kubectl
 * 1.31+ uses) or SPDY/3.1 (common/stream/spdy-exec.ts, portforward.ts). For a runtime with a
 * stream server (containerd), a SPDY upgrade is forwarded to the URL as it came
 * (./stream-proxy.ts), as upstream's kubelet forwards it; a WebSocket client that asks for v5 is
 * served here and joined to the runtime over SPDY (common/stream/translate.ts, as upstream's API
 * server translates), since containerd 1.6 serves neither v5 (stdin's close signal, which
 * `kubectl cp` needs) nor the port-forward tunnel. A WebSocket exec or attach that asks only for
 * v4 or older, which the runtimes' stream servers serve themselves, is forwarded as it came, as
 * upstream's kubelet forwards every upgrade: containerd's SPDY exec ends about 10 ms later than
 * its WebSocket one (measured: `exec -- true` 32 ms against 22 ms), which translating cost.
 *
 * Limits: at most maxStreamingConnections at once (429 beyond, ./stream-tracker.ts); a connection
 * idle either way for streamingConnectionIdleTimeout is cut; whatever ends the client's
 * connection ends the runtime's stream with it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
// Before 'ws': it reads its mask functions when loaded (../../common/stream/ws-mask.ts).
import '../../common/stream/ws-mask';
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws';
import type { Pod } from '../api/core-v1';
import type { LocalStreamTarget, RuntimeService } from '../cri';
import { InvalidArgumentError, MethodNotAllowedError, NotFoundError, UnavailableError } from '../errors';
import type { Log } from '../platform/logger';
import type { ContainerLocator } from '../checkpoint/container-locator';
import { POD_UID } from '../pod/runtime-labels';
import { execOptionsFromQuery, type ExecOptions, type ExecStreams } from '../../common/stream/exec-streams';
import { serveSpdyExec, SPDY_EXEC_PROTOCOLS } from '../../common/stream/spdy-exec';
import type { SpdySession } from '../../common/stream/spdy-connection';
import { openExecStreams, spdyConnect, spdyUpgradeSocket } from '../../common/stream/spdy-client';
import { translateExec } from '../../common/stream/translate';
import { acceptSpdyUpgrade, isSpdyUpgrade, negotiateStreamProtocol, offeredProtocols, refuseUpgrade, ACCEPTED_PROTOCOLS_HEADER } from '../../common/stream/spdy-upgrade';
import { serveWebSocketExec } from '../../common/stream/ws-exec';
import { WS_EXEC_PROTOCOLS, negotiateWsProtocol } from '../../common/stream/ws-channel';
import { parsePort, serveSpdyPortForward, serveWebSocketPortForward, type PortForwardOptions } from '../../common/stream/portforward';
import { PORT_FORWARD_PROTOCOL_V1, PORT_FORWARD_TUNNEL_PROTOCOL, STREAM_PROTOCOL_V1, STREAM_PROTOCOL_V4, STREAM_PROTOCOL_V4_BASE64, STREAM_PROTOCOL_V5 } from '../../common/stream/remotecommand';
import { parseStreamPath, type StreamTarget } from './stream-paths';
import { proxyUpgrade } from './stream-proxy';
import { joinSockets } from '../../common/stream/socket-join';
import type { StreamTracker } from './stream-tracker';

export interface StreamHandlerOptions {
  runtime: Pick<RuntimeService, 'exec' | 'attach' | 'portForward' | 'localStream' | 'listPodSandbox' | 'execSync'>;
  containers: ContainerLocator;
  pods: { podByName(namespace: string, name: string): Pod | undefined };
  tracker: StreamTracker;
  idleTimeoutMs: number;
  /** How long a SPDY client has to open its streams (upstream's 30 s). */
  streamCreationTimeoutMs?: number;
  log: Log;
}

const WS_PORT_FORWARD_PROTOCOLS = [PORT_FORWARD_TUNNEL_PROTOCOL, STREAM_PROTOCOL_V4, STREAM_PROTOCOL_V4_BASE64];

/** The ports of a port-forward query: the kubelet's `port` (upstream's PortHeader, what the API server sends), or `ports`; each may list several with commas. */
export function queryPorts(q: URLSearchParams): string[] {
  return [...q.getAll('port'), ...q.getAll('ports')].flatMap((p) => p.split(','));
}

function isWebSocket(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

function wsOffered(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
}

export class StreamHandler {
  /** The subprotocol chosen for each WebSocket request before the handshake (ws asks for it during). */
  private readonly chosen = new WeakMap<IncomingMessage, string>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (_offered, req) => this.chosen.get(req) ?? false,
  });

  constructor(private readonly o: StreamHandlerOptions) {}

  /** Non-upgrade requests: POST /run runs a command and answers its output; the streaming paths need an upgrade. */
  handle = async (req: IncomingMessage, res: ServerResponse): Promise<undefined> => {
    const url = new URL(req.url ?? '/', 'https://node.invalid');
    const t = this.target(url.pathname);
    if (t.verb !== 'run') throw new InvalidArgumentError(`${t.verb} needs a connection upgrade to SPDY/3.1 or WebSocket`);
    if (req.method !== 'POST') throw new MethodNotAllowedError(`${req.method ?? ''} is not allowed on /run (POST)`);
    const body = await readForm(req);
    const cmd = (url.searchParams.get('cmd') ?? body.get('cmd') ?? '').split(/\s+/).filter((w) => w !== '');
    if (cmd.length === 0) throw new InvalidArgumentError('cmd: Required value: the command to run');
    const id = await this.containerId(t);
    const r = await this.o.runtime.execSync(id, cmd, 0);
    // Upstream answers the combined output, whatever the exit code.
    const out = Buffer.concat([r.stdout, r.stderr]);
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': out.length });
    res.end(out);
    return undefined;
  };

  /** Upgrade requests for /exec, /attach and /portForward. */
  upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://node.invalid');
    const t = this.target(url.pathname);
    if (t.verb === 'run') throw new InvalidArgumentError('run does not take a connection upgrade (POST the command)');
    if (!isWebSocket(req) && !isSpdyUpgrade(req.headers)) throw new InvalidArgumentError('unsupported upgrade: ask for SPDY/3.1 or websocket');
    // The slot is taken before the runtime is asked for anything: a refused client costs it nothing.
    const release = this.o.tracker.acquireConnection();
    socket.once('close', release);
    try {
      const streamUrl = await this.streamUrl(t, url);
      const local = this.o.runtime.localStream?.(streamUrl);
      if (!local && isWebSocket(req) && (t.verb === 'portForward' || wsOffered(req).includes(STREAM_PROTOCOL_V5))) await this.translate(req, socket, head, streamUrl, t, url);
      else if (!local) await proxyUpgrade(req, socket, head, streamUrl, () => this.idle(socket, this.o.tracker.acquireRuntime()));
      else if (local.kind === 'exec') await this.serveExec(req, socket, head, local, execOptionsFromQuery(url.searchParams));
      else await this.servePortForward(req, socket, head, local, t, url);
    } catch (e) {
      release();
      throw e;
    }
  };

  /** Checks the request and asks the runtime for the stream's URL (CRI Exec, Attach or PortForward). */
  private async streamUrl(t: StreamTarget, url: URL): Promise<string> {
    if (t.verb === 'portForward') {
      const sandbox = await this.sandboxId(t);
      const ports = queryPorts(url.searchParams).filter((p) => p !== '');
      const parsed = ports.map((p) => parsePort(p));
      if (parsed.some((p) => p === undefined)) throw new InvalidArgumentError(`ports: Invalid value: ${JSON.stringify(ports.join(','))}: ports must be integers from 1 to 65535`);
      return this.o.runtime.portForward({ podSandboxId: sandbox, ports: parsed as number[] });
    }
    const opts = execOptionsFromQuery(url.searchParams);
    if (!opts.stdin && !opts.stdout && !opts.stderr) throw new InvalidArgumentError('you must specify at least 1 of stdin, stdout, stderr');
    if (t.verb === 'exec' && opts.command.length === 0) throw new InvalidArgumentError('command: Required value: you must specify a command');
    const id = await this.containerId(t);
    return t.verb === 'exec' ? this.o.runtime.exec({ containerId: id, cmd: opts.command, ...pick(opts) }) : this.o.runtime.attach({ containerId: id, ...pick(opts) });
  }

  private target(pathname: string): StreamTarget {
    const t = parseStreamPath(pathname);
    if (!t) throw new NotFoundError(`the server could not find the requested resource (${pathname})`);
    return t;
  }

  private pod(t: StreamTarget): Pod {
    const pod = this.o.pods.podByName(t.namespace, t.pod);
    if (!pod || (t.uid !== undefined && pod.metadata.uid !== t.uid)) throw new NotFoundError(`pod "${t.namespace}/${t.pod}"${t.uid ? ` with UID ${t.uid}` : ''} not found`);
    return pod;
  }

  private async containerId(t: StreamTarget): Promise<string> {
    this.pod(t);
    return this.o.containers.containerId(t.namespace, t.pod, t.container ?? '');
  }

  private async sandboxId(t: StreamTarget): Promise<string> {
    const pod = this.pod(t);
    const sandboxes = await this.o.runtime.listPodSandbox({ labelSelector: { [POD_UID]: pod.metadata.uid ?? '' }, state: 'SANDBOX_READY' });
    const newest = sandboxes.sort((a, b) => b.createdAt - a.createdAt)[0];
    if (!newest) throw new NotFoundError(`pod "${t.namespace}/${t.pod}" has no running sandbox`);
    return newest.id;
  }

  /** Cuts the client's connection after idleTimeoutMs without traffic either way; passes `release` through. */
  private idle(socket: Duplex, release: () => void): () => void {
    const s = socket as Duplex & { setTimeout?: (ms: number, cb: () => void) => void };
    s.setTimeout?.(this.o.idleTimeoutMs, () => {
      this.o.log.info({ idleTimeoutMs: this.o.idleTimeoutMs }, 'streaming connection idle: closed');
      socket.destroy();
    });
    return release;
  }

  private async serveExec(req: IncomingMessage, socket: Duplex, head: Buffer, target: Extract<LocalStreamTarget, { kind: 'exec' }>, opts: ExecOptions): Promise<void> {
    let streams: ExecStreams;
    if (isWebSocket(req)) {
      const offered = wsOffered(req);
      const protocol = offered.length === 0 ? STREAM_PROTOCOL_V1 : negotiateWsProtocol(offered, WS_EXEC_PROTOCOLS);
      if (!protocol) {
        refuseUpgrade(socket, 400, 'Bad Request', `unable to upgrade: none of the offered subprotocols [${offered.join(' ')}] is served ([${WS_EXEC_PROTOCOLS.join(' ')}])`);
        return;
      }
      const ws = await this.acceptWebSocket(req, socket, head, offered.length === 0 ? undefined : protocol);
      if (!ws) return;
      streams = serveWebSocketExec(ws, protocol, opts, socket);
    } else {
      const n = negotiateStreamProtocol(offeredProtocols(req.headers), SPDY_EXEC_PROTOCOLS);
      if ('error' in n) {
        refuseUpgrade(socket, 403, 'Forbidden', n.error, { [ACCEPTED_PROTOCOLS_HEADER]: SPDY_EXEC_PROTOCOLS.join(', ') });
        return;
      }
      acceptSpdyUpgrade(socket, n.protocol);
      if (head.length > 0) socket.unshift(head);
      try {
        streams = await serveSpdyExec(socket, { ...opts, protocol: n.protocol, streamCreationTimeoutMs: this.o.streamCreationTimeoutMs ?? 30_000 });
      } catch (e) {
        this.o.log.info({ error: (e as Error).message }, 'exec streams were not created');
        return;
      }
    }
    const release = this.idle(socket, this.o.tracker.acquireRuntime());
    try {
      const result = await target.run(streams).catch((e: unknown) => ({ error: (e as Error).message }));
      if (!streams.signal.aborted) await streams.finish(result, target.cmd);
    } finally {
      release();
      if (streams.signal.aborted) socket.destroy();
    }
  }

  private async servePortForward(req: IncomingMessage, socket: Duplex, head: Buffer, target: Extract<LocalStreamTarget, { kind: 'portforward' }>, t: StreamTarget, url: URL): Promise<void> {
    const o: PortForwardOptions = {
      podLabel: `${t.namespace}/${t.pod}`,
      streamCreationTimeoutMs: this.o.streamCreationTimeoutMs ?? 30_000,
      // Each dialled connection is a runtime stream until it closes.
      dial: async (port, signal) => {
        const conn = await target.dial(port, signal);
        conn.once('close', this.o.tracker.acquireRuntime());
        return conn;
      },
    };
    if (isWebSocket(req)) {
      const protocol = negotiateWsProtocol(wsOffered(req), WS_PORT_FORWARD_PROTOCOLS);
      if (!protocol) {
        refuseUpgrade(socket, 400, 'Bad Request', `unable to upgrade: port-forward serves the subprotocols [${WS_PORT_FORWARD_PROTOCOLS.join(' ')}]`);
        return;
      }
      const ports = queryPorts(url.searchParams).map((p) => parsePort(p));
      if (protocol !== PORT_FORWARD_TUNNEL_PROTOCOL && (ports.length === 0 || ports.some((p) => p === undefined))) {
        refuseUpgrade(socket, 400, 'Bad Request', 'ports: Required value: port-forward over WebSocket needs ?ports=');
        return;
      }
      const ws = await this.acceptWebSocket(req, socket, head, protocol);
      if (!ws) return;
      this.idle(socket, () => undefined);
      if (protocol === PORT_FORWARD_TUNNEL_PROTOCOL) {
        const tunnel = createWebSocketStream(ws);
        tunnel.on('error', () => tunnel.destroy());
        this.logProtocolErrors(serveSpdyPortForward(tunnel, o));
      } else serveWebSocketPortForward(ws, protocol, ports as number[], o);
      return;
    }
    const n = negotiateStreamProtocol(offeredProtocols(req.headers), [PORT_FORWARD_PROTOCOL_V1]);
    if ('error' in n) {
      refuseUpgrade(socket, 403, 'Forbidden', n.error, { [ACCEPTED_PROTOCOLS_HEADER]: PORT_FORWARD_PROTOCOL_V1 });
      return;
    }
    acceptSpdyUpgrade(socket, n.protocol);
    if (head.length > 0) socket.unshift(head);
    this.idle(socket, () => undefined);
    this.logProtocolErrors(serveSpdyPortForward(socket, o));
  }

  /** A WebSocket client of a runtime with a stream server: served here, joined to the runtime over SPDY. */
  private async translate(req: IncomingMessage, socket: Duplex, head: Buffer, streamUrl: string, t: StreamTarget, url: URL): Promise<void> {
    if (t.verb === 'portForward') return this.translatePortForward(req, socket, head, streamUrl);
    const opts = execOptionsFromQuery(url.searchParams);
    const offered = wsOffered(req);
    const protocol = offered.length === 0 ? STREAM_PROTOCOL_V1 : negotiateWsProtocol(offered, WS_EXEC_PROTOCOLS);
    if (!protocol) {
      refuseUpgrade(socket, 400, 'Bad Request', `unable to upgrade: none of the offered subprotocols [${offered.join(' ')}] is served ([${WS_EXEC_PROTOCOLS.join(' ')}])`);
      return;
    }
    // The runtime first: a refusal there is answered before the client's handshake completes.
    const runtime = await spdyConnect(streamUrl, ['v4.channel.k8s.io']).catch((e: unknown) => {
      throw new UnavailableError(`cannot reach the runtime's stream server: ${(e as Error).message}`);
    });
    const release = this.o.tracker.acquireRuntime();
    runtime.session.once('close', release);
    try {
      const remote = await openExecStreams(runtime.session, opts, runtime.protocol);
      const ws = await this.acceptWebSocket(req, socket, head, offered.length === 0 ? undefined : protocol);
      if (!ws) return;
      this.idle(socket, () => undefined);
      const client = serveWebSocketExec(ws, protocol, opts, socket);
      const result = await translateExec(client, remote, runtime.session);
      if (!client.signal.aborted) await client.finish(result, opts.command);
    } finally {
      runtime.session.destroy();
    }
  }

  /** The port-forward tunnel (SPDY inside WebSocket messages) joined byte for byte to a SPDY port-forward connection to the runtime. */
  private async translatePortForward(req: IncomingMessage, socket: Duplex, head: Buffer, streamUrl: string): Promise<void> {
    const protocol = negotiateWsProtocol(wsOffered(req), [PORT_FORWARD_TUNNEL_PROTOCOL]);
    if (!protocol) {
      // WebSocket v4 port-forward is the runtime's own: forwarded as it came.
      await proxyUpgrade(req, socket, head, streamUrl, () => this.idle(socket, this.o.tracker.acquireRuntime()));
      return;
    }
    const runtime = await spdyUpgradeSocket(streamUrl, [PORT_FORWARD_PROTOCOL_V1]).catch((e: unknown) => {
      throw new UnavailableError(`cannot reach the runtime's stream server: ${(e as Error).message}`);
    });
    const release = this.o.tracker.acquireRuntime();
    runtime.socket.once('close', release);
    const ws = await this.acceptWebSocket(req, socket, head, protocol);
    if (!ws) {
      runtime.socket.destroy();
      return;
    }
    this.idle(socket, () => undefined);
    const tunnel = createWebSocketStream(ws);
    joinSockets(tunnel, runtime.socket);
    runtime.socket.resume();
  }

  private logProtocolErrors(session: SpdySession): void {
    session.on('protocol-error', (e: Error) => this.o.log.info({ error: e.message }, 'SPDY protocol error: session closed'));
  }

  /** Completes the WebSocket handshake with `protocol`; undefined when ws refused it (a malformed handshake, answered 400 by ws) or the client left. */
  private acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string | undefined): Promise<WebSocket | undefined> {
    if (protocol) {
      this.chosen.set(req, protocol);
      // Upstream's tunnel subprotocol (SPDY/3.1+portforward.k8s.io) has a "/", which RFC 6455's
      // token grammar (and so ws) refuses; the choice is made already, so ws sees a stand-in.
      req.headers['sec-websocket-protocol'] = 'chosen';
    }
    return new Promise((resolve) => {
      const gone = (): void => resolve(undefined);
      socket.once('close', gone);
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        socket.off('close', gone);
        resolve(ws);
      });
    });
  }
}

function pick(o: ExecOptions): ExecOptions {
  return { stdin: o.stdin, stdout: o.stdout, stderr: o.stderr, tty: o.tty };
}

/** Reads a small urlencoded body (the /run form; at most 64 KiB). */
async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new InvalidArgumentError('the request body is over 64 KiB');
    parts.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(parts).toString('utf8'));
}
