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
  return (api: RemoteApi, target: { host: string; port: number; servername: string }): Promise<{ status: number; body: unknown }> =>
    new Promise((resolve, reject) => {
      const req = httpsGet(
        {
          host: target.host,
          port: target.port,
          servername: target.servername,
          path: `/apis/${api.group}/${api.version}`,
          headers: { accept: 'application/json', ...identityHeaders({ username: 'system:kube-aggregator', groups: ['system:authenticated'] }) },
          ca: api.caPem,
          cert: identity.certPem,
          key: identity.keyPem,
          rejectUnauthorized: !api.insecureSkipTLSVerify,
          checkServerIdentity: (_h, cert) => (api.insecureSkipTLSVerify ? undefined : checkServerIdentity(target.servername, cert)),
          timeout: CHECK_TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_DISCOVERY_BYTES) req.destroy(new Error('discovery document too large'));
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
      req.on('timeout', () => req.destroy(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)));
      req.on('error', reject);
    });
}
