import { request as httpsRequest } from 'node:https';
import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import type { KeyPairPem } from '../pki/certs';
import type { ResourceType } from '../registry/resource-type';
import { queryBool } from '../server/request-info';
import type { ResourceRequest } from './context';
import type { DecodedVersions } from './decoded-versions';

/** Query parameters of pods/log that the agent's /containerLogs endpoint understands: booleans (checked here, passed as true/false) and the rest as given. */
const PASSED_BOOLS = ['follow', 'previous', 'timestamps'];
const PASSED = ['tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'];
const DEFAULT_AGENT_PORT = 10250;

/**
 * GET pods/{name}/log (4.1): proxied to the agent of the pod's node at
 * https://<InternalIP>:<daemonEndpoints port>/containerLogs/{ns}/{pod}/{container}, presenting the
 * server's kubelet-client certificate. The agent's serving certificate is verified against
 * --kubelet-certificate-authority when set; otherwise, as upstream by default, it is not (agents
 * serve self-signed certificates: there is no kubelet-serving signer).
 */
export function podLogHandler(client: KeyPairPem, nodeType: ResourceType, versions: DecodedVersions, caPem?: string): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    if (r.req.method !== 'GET') throw errors.methodNotAllowed(`pods/log supports only GET, not ${r.req.method}`);
    // The options first, as upstream validates PodLogOptions before it looks at the pod.
    const q = new URLSearchParams();
    for (const k of PASSED_BOOLS) if (r.query.has(k)) q.set(k, String(queryBool(r.query, k)));
    for (const k of PASSED) {
      const v = r.query.get(k);
      if (v !== null) q.set(k, v);
    }
    // PodLogOptions.insecureSkipTLSVerifyBackend: the caller accepts an unverified agent certificate for this request.
    const skipVerify = queryBool(r.query, 'insecureSkipTLSVerifyBackend');
    const pod = await versions.get(r.store, r.type, r.info.namespace, r.info.name);
    const container = logContainer(pod, r.info.name, r.query.get('container') ?? '');
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) throw errors.badRequest(`pod ${r.info.name} does not have a host assigned`);
    const node = await versions.get(r.store, nodeType, '', nodeName);
    const { host, port } = agentEndpoint(node);
    const path = `/containerLogs/${encodeURIComponent(r.info.namespace)}/${encodeURIComponent(r.info.name)}/${encodeURIComponent(container)}${q.size ? `?${q.toString()}` : ''}`;
    await new Promise<void>((resolve, reject) => {
      const up = httpsRequest(
        { host, port, path, method: 'GET', cert: client.certPem, key: client.keyPem, ...(caPem && !skipVerify ? { ca: caPem, rejectUnauthorized: true } : { rejectUnauthorized: false }), timeout: 30_000 },
        (res) => {
          const type = res.headers['content-type'] ?? 'text/plain';
          if ((res.statusCode ?? 500) >= 400) {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => reject(new ApiError(res.statusCode === 404 ? 'NotFound' : 'BadRequest', body.trim() || `the node agent answered ${res.statusCode}`, undefined, res.statusCode === 404 ? 404 : 400)));
            return;
          }
          r.res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-cache, private' });
          // Sent now, not with the first line: a followed log may be silent for long.
          r.res.flushHeaders();
          res.pipe(r.res);
          res.on('end', () => resolve());
          res.on('error', reject);
        },
      );
      up.on('timeout', () => up.destroy(new Error('timed out')));
      up.on('error', (err) => reject(new ApiError('ServiceUnavailable', `cannot reach the node agent of ${nodeName} at ${host}:${port}: ${err.message}`)));
      // A follow stream ends when the client goes away.
      r.req.on('close', () => up.destroy());
      up.end();
    });
  };
}

/**
 * The container whose log is asked for: the one named, which may be any of the pod's containers,
 * init containers or ephemeral containers (`kubectl logs pod -c debugger` after `kubectl debug`),
 * as upstream's podHasContainerWithName; unnamed, the pod's only container.
 */
function logContainer(pod: KObject, podName: string, container: string): string {
  const spec = (pod.spec ?? {}) as Partial<Record<'containers' | 'initContainers' | 'ephemeralContainers', Array<{ name: string }>>>;
  const containers = (spec.containers ?? []).map((c) => c.name);
  if (!container) {
    if (containers.length !== 1) throw errors.badRequest(`a container name must be specified for pod ${podName}, choose one of: [${containers.join(' ')}]`);
    return containers[0];
  }
  const all = [...containers, ...(spec.initContainers ?? []).map((c) => c.name), ...(spec.ephemeralContainers ?? []).map((c) => c.name)];
  if (!all.includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${podName}`);
  return container;
}

/** Where a node's agent listens: its InternalIP (else Hostname) and daemonEndpoints port (default 10250). */
export function agentEndpoint(node: KObject): { host: string; port: number } {
  const status = (node.status ?? {}) as { addresses?: Array<{ type: string; address: string }>; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const addrs = status.addresses ?? [];
  const host = (addrs.find((a) => a.type === 'InternalIP') ?? addrs.find((a) => a.type === 'Hostname'))?.address;
  if (!host) throw new ApiError('ServiceUnavailable', `node ${node.metadata.name} reports no address`);
  return { host, port: status.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_AGENT_PORT };
}
