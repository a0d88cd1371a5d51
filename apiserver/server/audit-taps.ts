/**
 * Where the audit filter (filters/audit/) reads a request's body and a response's body and status,
 * without the handlers knowing about audit: readBody and send call the tap registered for their
 * request or response, if any. WeakMaps, so nothing outlives the request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const requestBodyTaps = new WeakMap<IncomingMessage, (body: Buffer) => void>();
export const responseTaps = new WeakMap<ServerResponse, (status: number, body: unknown) => void>();
