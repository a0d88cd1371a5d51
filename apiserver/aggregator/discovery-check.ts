import { get as httpsGet } from 'node:https';
import { checkServerIdentity } from 'node:tls';
import { identityHeaders, type ProxyClientIdentity } from './proxy';
import type { RemoteApi } from './remote-apis';

/** Upstream's availability check gives a server 5 s to answer its discovery. */
const CHECK_TIMEOUT_MS = 5_000;
/** Discovery documents are small; a server answering more is not trusted with memory. */
const MAX_DISCOVERY_BYTES = 4 * 1024 * 1024;

/**
 * GETs /apis/<group>/<version> from an aggregated server as the availability controller does:
 * over TLS verified against the APIService's caBundle and the Service's DNS name, presenting the
 * front-proxy identity, as the user system:kube-aggregator (upstream's). Resolves with the status
 * and the parsed body; rejects when the server cannot be reached or does not answer in time.
 */
export function discoveryCheck(identity: ProxyClientIdentity) {
  const get = remoteGet(identity);
  return (api: RemoteApi, target: RemoteTarget): Promise<{ status: number; body: unknown }> => get(api, target, `/apis/${api.group}/${api.version}`, MAX_DISCOVERY_BYTES, CHECK_TIMEOUT_MS);
}

/** Where an APIService's server was found (resolve.ts). */
export interface RemoteTarget {
  host: string;
  port: number;
  servername: string;
}

/** A GET of a JSON document from an aggregated server: the status and the parsed body (undefined when not JSON). */
export type RemoteGet = (api: RemoteApi, target: RemoteTarget, path: string, maxBytes: number, timeoutMs: number) => Promise<{ status: number; body: unknown }>;

/**
 * GETs a JSON document from an aggregated server as system:kube-aggregator, over TLS verified as
 * for discovery; an answer over maxBytes or later than timeoutMs rejects (bounded memory and time).
 */
export function remoteGet(identity: ProxyClientIdentity): RemoteGet {
  return (api, target, path, maxBytes, timeoutMs) =>
    new Promise((resolve, reject) => {
      const req = httpsGet(
        {
          host: target.host,
          port: target.port,
          servername: target.servername,
          path,
          headers: { accept: 'application/json', ...identityHeaders({ username: 'system:kube-aggregator', groups: ['system:authenticated'] }) },
          ca: api.caPem,
          cert: identity.certPem,
          key: identity.keyPem,
          rejectUnauthorized: !api.insecureSkipTLSVerify,
          checkServerIdentity: (_h, cert) => (api.insecureSkipTLSVerify ? undefined : checkServerIdentity(target.servername, cert)),
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) req.destroy(new Error(`${path}: answer larger than ${maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on('end', () => {
            let body: unknown;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              body = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
    });
}
