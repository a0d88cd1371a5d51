/**
 * GET /stats/summary?only_cpu_and_memory=true of a node's agent, presenting the API server's
 * kubelet-client certificate, as the pods/log and node proxy handlers reach agents (metrics-server
 * does the same with its own client certificate). The agent's serving certificate is verified
 * against --kubelet-certificate-authority when set, else not (agents serve self-signed ones).
 */
import { request as httpsRequest } from 'node:https';
import type { KObject } from '../../api/types';
import { agentEndpoint } from '../../handlers/pod-log';
import type { KeyPairPem } from '../../pki/certs';

/** The most a summary may be (a node with hundreds of pods is well below). */
const MAX_BYTES = 16 * 1024 * 1024;

export function agentSummaryClient(tls: { client: KeyPairPem; caPem?: string }, timeoutMs: number): (node: KObject) => Promise<unknown> {
  return (node) => {
    const { host, port } = agentEndpoint(node);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host,
          port,
          path: '/stats/summary?only_cpu_and_memory=true',
          method: 'GET',
          headers: { accept: 'application/json' },
          cert: tls.client.certPem,
          key: tls.client.keyPem,
          ...(tls.caPem ? { ca: tls.caPem, rejectUnauthorized: true } : { rejectUnauthorized: false }),
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (d: Buffer) => {
            size += d.length;
            if (size > MAX_BYTES) req.destroy(new Error(`the summary is larger than ${MAX_BYTES} bytes`));
            else chunks.push(d);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) return reject(new Error(`the node agent answered ${res.statusCode}: ${text.slice(0, 200).trim()}`));
            try {
              resolve(JSON.parse(text));
            } catch (e) {
              reject(new Error(`the summary is not JSON: ${(e as Error).message}`));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  };
}
