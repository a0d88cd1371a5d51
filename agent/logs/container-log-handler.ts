/**
 * GET /containerLogs/{namespace}/{pod}/{container}: the agent side of `pods/{name}/log`
 * (upstream's kubelet server getContainerLogs). The API server proxies the log sub-resource
 * here with the same query parameters (follow, previous, timestamps, tailLines, sinceSeconds,
 * sinceTime, limitBytes). The answer is text/plain; with follow it streams until the container
 * stops or the client goes away. Errors are plain text with upstream's codes: 400 for bad options
 * and "previous terminated container ... not found", 404 for unknown pods and containers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../platform/clock';
import { LogOptionsError, parseLogOptions } from './log-options';
import { readContainerLogs } from './read-logs';

export const CONTAINER_LOGS_PREFIX = '/containerLogs/';

export interface LogLocation {
  path: string;
  containerId: string;
  running: boolean;
}

/** Finds log files; PodManager implements it. */
export interface LogLocator {
  /** The container's (or its previous instance's) log file. Rejects an Error with `code` 400 or 404 for requests that cannot be served. */
  containerLog(namespace: string, pod: string, container: string, previous: boolean, signal?: AbortSignal): Promise<LogLocation>;
  /** Whether the container still runs. Never rejects. */
  containerRunning(containerId: string, signal?: AbortSignal): Promise<boolean>;
}

export interface ContainerLogHandlerOptions {
  locator: LogLocator;
  clock: Clock;
  pollMs?: number;
}

function fail(res: ServerResponse, code: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(message.endsWith('\n') ? message : `${message}\n`);
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

/** Builds the request handler. It answers every request it is given; callers route /containerLogs/ to it. */
export function containerLogHandler(o: ContainerLogHandlerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      fail(res, 405, `method ${req.method ?? ''} not allowed`);
      return;
    }
    const url = new URL(req.url ?? '/', 'https://node.invalid');
    const target = parseContainerLogPath(url.pathname);
    if (!target) {
      fail(res, 404, 'expected /containerLogs/{namespace}/{pod}/{container}');
      return;
    }
    let opts;
    try {
      opts = parseLogOptions(url.searchParams, o.clock.now());
    } catch (e) {
      if (e instanceof LogOptionsError) {
        fail(res, 400, e.message);
        return;
      }
      throw e;
    }
    const ac = new AbortController();
    const onClose = () => ac.abort();
    res.on('close', onClose);
    try {
      let loc;
      try {
        loc = await o.locator.containerLog(target.namespace, target.pod, target.container, opts.previous, ac.signal);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        fail(res, code === 400 || code === 404 ? code : 500, (e as Error).message);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      const write = (chunk: Buffer) =>
        new Promise<void>((resolve) => {
          if (res.write(chunk)) resolve();
          else res.once('drain', () => resolve());
        });
      const follow = opts.follow && !opts.previous && loc.running;
      const containerId = loc.containerId;
      await readContainerLogs(
        loc.path,
        { ...opts, follow },
        write,
        { clock: o.clock, isRunning: () => o.locator.containerRunning(containerId, ac.signal), ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}) },
        ac.signal,
      );
      res.end();
    } catch (e) {
      fail(res, 500, `cannot read the container log: ${(e as Error).message}`);
    } finally {
      res.off('close', onClose);
    }
  };
}
