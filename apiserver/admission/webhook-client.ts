import { Agent, request as httpsRequest } from 'node:https';
import { unresolved, type ServiceRef, type Target } from '../registry/service-resolver';
import { HookCallError } from './webhook-review';

/**
 * POSTs an AdmissionReview to a webhook over TLS (upstream's webhook client): the server's
 * certificate is verified with clientConfig.caBundle (system roots when none), each call bounded
 * by the hook's timeoutSeconds (sent as `?timeout=Ns`, as upstream does). A service clientConfig
 * is `https://<name>.<namespace>.svc:<port><path>` (the URL errors name and the Host header
 * carries), reached at the address the Service resolves to (upstream's ServiceResolver: the
 * Service's endpoint, see registry/service-resolver.ts) with TLS verified for `<name>.<namespace>.svc`.
 */

type Rec = Record<string, unknown>;

/** A cancellable one-shot timer (injected so tests need no real waits). */
export type SetTimer = (ms: number, fn: () => void) => () => void;

const realTimer: SetTimer = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/** Finds the server of a Service port: an address to dial, or why there is none (registry/service-resolver.ts resolveTarget over Services and EndpointSlices). */
export type ResolveService = (ref: ServiceRef) => Promise<Target>;

export interface WebhookClientOptions {
  setTimer?: SetTimer;
  /** Resolves service clientConfigs; absent, a service clientConfig fails with an error naming the service. */
  services?: ResolveService;
  /** Largest answer accepted; default 3 MiB, the request body limit. */
  maxResponseBytes?: number;
}

/**
 * Keep-alive connection pools by CA bundle (upstream's webhook clients reuse their connections):
 * a TLS handshake per call would cost more than the call. Bounded: a pool per distinct bundle,
 * at most 64 of them (the oldest is destroyed beyond that).
 */
const agents = new Map<string, Agent>();
function agentFor(ca: string | undefined): Agent {
  const key = ca ?? '';
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, ca, timeout: 60_000 });
    agents.set(key, agent);
    if (agents.size > 64) {
      const [oldest, a] = agents.entries().next().value as [string, Agent];
      agents.delete(oldest);
      a.destroy();
    }
  }
  return agent;
}

/** Where a hook is reached: its URL (with the timeout query), the CA bundle, and for a service the address dialled and the TLS name. */
export interface HookEndpoint {
  url: string;
  ca?: string;
  connect?: { host: string; port: number; servername: string };
}

/**
 * Resolves clientConfig to an endpoint; throws HookCallError when a service cannot be resolved,
 * in upstream's words (`Post "https://<svc>.<ns>.svc:443/...": no endpoints available for service "<svc>"`).
 */
export async function hookEndpoint(clientConfig: Rec, timeoutSeconds: number, services?: ResolveService): Promise<HookEndpoint> {
  const ca = typeof clientConfig.caBundle === 'string' && clientConfig.caBundle !== '' ? Buffer.from(clientConfig.caBundle, 'base64').toString('utf8') : undefined;
  if (typeof clientConfig.url === 'string') {
    const url = new URL(clientConfig.url);
    url.searchParams.set('timeout', `${timeoutSeconds}s`);
    return { url: url.toString(), ca };
  }
  const svc = (clientConfig.service ?? {}) as Rec;
  const ref = { namespace: String(svc.namespace), name: String(svc.name), port: typeof svc.port === 'number' ? svc.port : 443 };
  // Written out rather than through URL, which would drop the default port: upstream's errors show `:443`.
  const url = `https://${ref.name}.${ref.namespace}.svc:${ref.port}${typeof svc.path === 'string' ? svc.path : ''}?timeout=${timeoutSeconds}s`;
  const failed = (why: string) => new HookCallError(`failed to call webhook: Post "${url}": ${why}`);
  if (!services) throw failed(`service "${ref.name}" in "${ref.namespace}" cannot be resolved: no service resolver is configured`);
  const target = await services(ref);
  if (unresolved(target)) throw failed(target.detail);
  return { url, ca, connect: target };
}

/** Posts body and returns the parsed JSON answer; every failure (TLS, timeout, HTTP status, JSON) is a HookCallError in upstream's words. */
export function postReview(endpoint: HookEndpoint, body: unknown, timeoutSeconds: number, o: WebhookClientOptions = {}): Promise<unknown> {
  const setTimer = o.setTimer ?? realTimer;
  const max = o.maxResponseBytes ?? 3 * 1024 * 1024;
  const payload = Buffer.from(JSON.stringify(body));
  const failed = (why: string) => new HookCallError(`failed to call webhook: Post "${endpoint.url}": ${why}`);
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | undefined, value?: unknown) => {
      if (done) return;
      done = true;
      cancel();
      if (err) reject(err);
      else resolve(value);
    };
    const req = httpsRequest(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': payload.length, ...(endpoint.connect ? { host: endpoint.url.slice('https://'.length).replace(/[/?].*$/, '') } : {}) },
      agent: agentFor(endpoint.ca),
      // A service's endpoint is dialled by address, its certificate checked for the service's name.
      ...(endpoint.connect ? { hostname: endpoint.connect.host, port: endpoint.connect.port, servername: endpoint.connect.servername } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > max) {
          req.destroy();
          finish(failed(`response larger than ${max} bytes`));
        } else chunks.push(c);
      });
      res.on('error', (err) => finish(failed(err.message)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          finish(new HookCallError(`failed to call webhook: the server responded with the status code ${status} but did not return more information`));
          return;
        }
        try {
          finish(undefined, JSON.parse(text));
        } catch (err) {
          finish(new HookCallError(`failed to call webhook: the server's answer is not JSON: ${(err as Error).message}`));
        }
      });
    });
    const cancel = setTimer(timeoutSeconds * 1000, () => {
      finish(failed('context deadline exceeded'));
      req.destroy();
    });
    req.on('error', (err) => finish(failed(err.message)));
    req.end(payload);
  });
}

/**
 * The client for webhooks other than admission's (a CRD's conversion webhook): clientConfig
 * resolved as for admission hooks, the body posted with the same TLS, pools and timeout; failures
 * reject with the cause alone (without admission's "failed to call webhook: " prefix), for the
 * caller to word.
 */
export async function postToHook(clientConfig: Rec, body: unknown, timeoutSeconds: number, o: WebhookClientOptions = {}): Promise<unknown> {
  try {
    const endpoint = await hookEndpoint(clientConfig, timeoutSeconds, o.services);
    return await postReview(endpoint, body, timeoutSeconds, o);
  } catch (err) {
    if (err instanceof HookCallError) throw new Error(err.message.replace(/^failed to call webhook: /, ''), { cause: err });
    throw err;
  }
}
