/**
 * GET /containerLogs/{namespace}/{pod}/{container}: the agent side of `pods/{name}/log`
 * (upstream's kubelet server getContainerLogs). The API server proxies the log sub-resource
 * here with the same query parameters (follow, previous, timestamps, tailLines, sinceSeconds,
 * sinceTime, limitBytes). The answer is text/plain; with follow it streams until the container
 * stops or the client goes away. Errors are thrown (agent/errors.ts) and answered by the server's
 * edge in plain text, with upstream's codes: 400 for bad options and "previous terminated
 * container ... not found", 404 for unknown pods and containers, 500 for anything else.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamWriter, type After } from '../../common/stream-writer';
import { AgentError, InternalError, Kinds, MethodNotAllowedError, NotFoundError } from '../errors';
import type { Clock } from '../platform/clock';
import { parseLogOptions, type LogOptions } from './log-options';
import { readContainerLogs } from './read-logs';

export const CONTAINER_LOGS_PREFIX = '/containerLogs/';

export interface LogLocation {
  path: string;
  containerId: string;
  running: boolean;
}

/**
 * A container's log cannot be located: its httpStatus (400 or 404) is what the handler answers.
 * Defined here, with the LogLocator that rejects it.
 */
export class LogLocateError extends AgentError {
  override readonly name = 'LogLocateError';
  override readonly code = 'SVC_NODE_ERR_LOG_LOCATE';
  constructor(status: 400 | 404, message: string) {
    super(message, status === 404 ? Kinds.NotFound : Kinds.InvalidArgument);
  }
}

/** Finds log files; PodManager implements it. */
export interface LogLocator {
  /** The container's (or its previous instance's) log file. Rejects LogLocateError for requests that cannot be served (any other rejection is a 500). */
  containerLog(namespace: string, pod: string, container: string, previous: boolean, signal?: AbortSignal): Promise<LogLocation>;
  /** Whether the container still runs. Never rejects. */
  containerRunning(containerId: string, signal?: AbortSignal): Promise<boolean>;
}

export interface ContainerLogHandlerOptions {
  locator: LogLocator;
  clock: Clock;
  pollMs?: number;
  /** How long a write may wait for the peer before the stream is cut (default WRITE_DEADLINE_MS, 60 s). */
  writeDeadlineMs?: number;
  /** One-shot timers for that deadline (default real timers). */
  after?: After;
}

/** Splits /containerLogs/{ns}/{pod}/{container}; undefined when the path is not of that shape. */
export function parseContainerLogPath(pathname: string): { namespace: string; pod: string; container: string } | undefined {
  if (!pathname.startsWith(CONTAINER_LOGS_PREFIX)) return undefined;
  const parts = pathname.slice(CONTAINER_LOGS_PREFIX.length).split('/');
  if (parts.length !== 3 || parts.some((p) => p === '')) return undefined;
  try {
    const [namespace, pod, container] = parts.map((p) => decodeURIComponent(p)) as [string, string, string];
    return { namespace, pod, container };
  } catch {
    return undefined;
  }
}

/**
 * Writes the log (following it while the container runs, when asked) and ends the answer. It
 * stops as soon as the connection ends (close, error, reset) or the peer takes nothing for the
 * write deadline (the socket is cut then): a reader that stops reading holds one chunk, not the
 * open file and the request forever.
 */
async function streamLog(o: ContainerLogHandlerOptions, loc: LogLocation, opts: LogOptions, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const out = new StreamWriter(res, { signal, ...(o.after ? { after: o.after } : {}), ...(o.writeDeadlineMs !== undefined ? { writeDeadlineMs: o.writeDeadlineMs } : {}) });
  const follow = opts.follow && !opts.previous && loc.running;
  const containerId = loc.containerId;
  try {
    await readContainerLogs(
      loc.path,
      { ...opts, follow },
      async (chunk) => void (await out.write(chunk)),
      { clock: o.clock, isRunning: () => o.locator.containerRunning(containerId, out.signal), ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}) },
      out.signal,
    );
  } finally {
    out.end();
  }
}

/**
 * Builds the request handler; callers route /containerLogs/ to it, with plain-text errors. It
 * streams the log itself and rejects an AgentError for what it cannot serve (LogOptionsError is
 * a 400); when the stream already started, the edge just ends it.
 */
export function containerLogHandler(o: ContainerLogHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new MethodNotAllowedError(`method ${req.method ?? ''} not allowed`);
    const url = new URL(req.url ?? '/', 'https://node.invalid');
    const target = parseContainerLogPath(url.pathname);
    if (!target) throw new NotFoundError('expected /containerLogs/{namespace}/{pod}/{container}');
    const opts = parseLogOptions(url.searchParams, o.clock.now());
    const ac = new AbortController();
    const onClose = () => ac.abort();
    res.on('close', onClose);
    try {
      let loc;
      try {
        loc = await o.locator.containerLog(target.namespace, target.pod, target.container, opts.previous, ac.signal);
      } catch (e) {
        if (e instanceof LogLocateError) throw e;
        throw new InternalError((e as Error).message, { cause: e });
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' });
      // The status goes out now: a followed log may stay silent for long, and its caller (the
      // API server's pods/log, then the client) waits for the answer's headers before anything.
      res.flushHeaders();
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      try {
        await streamLog(o, loc, opts, res, ac.signal);
      } catch (e) {
        throw new InternalError(`cannot read the container log: ${(e as Error).message}`, { cause: e });
      }
    } finally {
      res.off('close', onClose);
    }
  };
}
