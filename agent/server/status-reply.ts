/** Writes Status JSON answers (spec 7) from the agent's server; headers already sent means just end. */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../../apiserver/api/errors';

export function replyError(res: ServerResponse, e: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(e.toStatus());
  res.writeHead(e.code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function replyJson(res: ServerResponse, code: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
