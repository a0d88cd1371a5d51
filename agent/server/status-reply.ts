/**
 * The agent's HTTP edge (as apiserver/server/respond.ts is the API server's): handlers return a
 * JSON body or write their answer, and throw on failure; node-server.ts answers what they throw
 * here, once. An AgentError (agent/errors.ts) is answered with its httpStatus, statusReason and
 * message, as a metav1.Status body (spec 7) or, on routes that answer in plain text (container
 * logs and health, as upstream's kubelet), as its message. Anything else is a bug: a 500 Status
 * "Internal error occurred: <message>" on every route. Headers already sent means just end.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../../apiserver/api/errors';
import { AgentError } from '../errors';

/** How a route answers its errors. */
export type ErrorBody = 'status' | 'text';

export function replyJson(res: ServerResponse, code: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Plain text with a final newline (upstream's http.Error adds one). */
function replyText(res: ServerResponse, code: number, message: string): void {
  const body = message.endsWith('\n') ? message : `${message}\n`;
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers `err` (see the file comment). Never throws. */
export function replyError(res: ServerResponse, err: unknown, body: ErrorBody = 'status'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (!(err instanceof AgentError)) {
    const message = err instanceof Error ? err.message : String(err);
    replyJson(res, 500, new ApiError('InternalError', `Internal error occurred: ${message}`).toStatus());
    return;
  }
  if (body === 'text') replyText(res, err.httpStatus, err.message);
  else replyJson(res, err.httpStatus, new ApiError(err.statusReason, err.message, undefined, err.httpStatus).toStatus());
}

/** The Status answer of `err` written on a raw socket (an upgrade request that is refused), then the socket ended. Never throws. */
export function replyErrorOnSocket(socket: Duplex, err: unknown): void {
  if (socket.destroyed || !socket.writable) return;
  const agentError = err instanceof AgentError ? err : undefined;
  const code = agentError?.httpStatus ?? 500;
  const status = agentError
    ? new ApiError(agentError.statusReason, agentError.message, undefined, code).toStatus()
    : new ApiError('InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`).toStatus();
  const body = JSON.stringify(status);
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
