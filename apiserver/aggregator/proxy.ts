/**
 * The aggregator's proxy (upstream's kube-aggregator proxy handler): a request for a remote group
 * version, already authenticated and authorized here, is forwarded over TLS to its server with
 * this server's front-proxy client certificate (--proxy-client-cert-file) and the caller's
 * identity in the request-header authentication headers (X-Remote-User, X-Remote-Group,
 * X-Remote-Extra-<key>, spec 5.5) that such a server trusts from that certificate. The caller's
 * own credentials and impersonation headers are never forwarded. Bodies stream both ways, so
 * watches work; the backend's answer is relayed as it is.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { ApiError } from '../api/errors';
import type { UserInfo } from '../api/user';
import type { RemoteApi } from './remote-apis';

/** The client identity the aggregator presents (--proxy-client-cert-file / --proxy-client-key-file). */
export interface ProxyClientIdentity {
  certPem?: string;
  keyPem?: string;
}

/** Headers never forwarded: the caller's credentials, impersonation, identity headers a caller could forge, and hop-by-hop ones. */
const DROPPED = /^(authorization|proxy-authorization|impersonate-.*|x-remote-.*|connection|keep-alive|transfer-encoding|upgrade|te|trailer|host)$/i;

/** The request-header names of the caller's identity; extra keys percent-encoded as upstream. */
export function identityHeaders(user: UserInfo): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'X-Remote-User': user.username };
  if (user.groups.length) h['X-Remote-Group'] = user.groups;
  if (user.uid) h['X-Remote-Uid'] = user.uid;
  for (const [k, vs] of Object.entries(user.extra ?? {})) h[`X-Remote-Extra-${encodeURIComponent(k)}`] = vs;
  return h;
}

export interface ProxyTarget {
  host: string;
  port: number;
  servername: string;
}

/** Forwards req to the target and relays the answer; rejects with a 503 when the server cannot be reached. */
export function proxyRequest(req: IncomingMessage, res: ServerResponse, api: RemoteApi, target: ProxyTarget, user: UserInfo, identity: ProxyClientIdentity, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED.test(k)) headers[k] = v;
  Object.assign(headers, identityHeaders(user));
  return new Promise((resolve, reject) => {
    const out = httpsRequest({
      host: target.host,
      port: target.port,
      servername: target.servername,
      method: req.method,
      path: req.url,
      headers,
      ca: api.caPem,
      cert: identity.certPem,
      key: identity.keyPem,
      rejectUnauthorized: !api.insecureSkipTLSVerify,
      // The server's certificate names the Service, not the address dialled (upstream's check).
      checkServerIdentity: (_host, cert) => (api.insecureSkipTLSVerify ? undefined : tlsCheck(target.servername, cert)),
      signal,
    });
    out.on('response', (back) => {
      res.writeHead(back.statusCode ?? 502, back.headers);
      // Sent at once: a watch's answer has no body until its first event, and the client waits for the head.
      res.flushHeaders();
      back.pipe(res);
      back.on('end', resolve);
      back.on('error', reject);
      res.on('close', () => {
        back.destroy();
        resolve();
      });
    });
    out.on('error', (err) => {
      if (res.headersSent) return resolve();
      reject(new ApiError('ServiceUnavailable', `error trying to reach service: ${err.message}`));
    });
    req.pipe(out);
  });
}


function tlsCheck(servername: string, cert: PeerCertificate): Error | undefined {
  return checkServerIdentity(servername, cert);
}
