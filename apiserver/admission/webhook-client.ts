import { lookup } from 'node:dns/promises';
import { Agent, request as httpsRequest } from 'node:https';
import { HookCallError } from './webhook-review';

/**
 * POSTs an AdmissionReview to a webhook over TLS (upstream's webhook client): the server's
 * certificate is verified with clientConfig.caBundle (system roots when none), each call bounded
 * by the hook's timeoutSeconds (sent as `?timeout=Ns`, as upstream does). A service clientConfig
 * becomes `https://<name>.<namespace>.svc:<port><path>` when that name resolves; until cluster
 * networking exists that usually fails, with an error naming the service.
 */

type Rec = Record<string, unknown>;

/** A cancellable one-shot timer (injected so tests need no real waits). */
export type SetTimer = (ms: number, fn: () => void) => () => void;

const realTimer: SetTimer = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

export interface WebhookClientOptions {
  setTimer?: SetTimer;
  /** Resolves a service's DNS name; rejects when it does not resolve. */
  resolve?: (host: string) => Promise<unknown>;
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

/** Where a hook is reached: its URL (with the timeout query) and the CA bundle. */
export interface HookEndpoint {
  url: string;
  ca?: string;
}

/** Resolves clientConfig to an endpoint; throws HookCallError naming the service when it cannot. */
export async function hookEndpoint(clientConfig: Rec, timeoutSeconds: number, resolve: (host: string) => Promise<unknown> = lookup): Promise<HookEndpoint> {
  const ca = typeof clientConfig.caBundle === 'string' && clientConfig.caBundle !== '' ? Buffer.from(clientConfig.caBundle, 'base64').toString('utf8') : undefined;
  let url: URL;
  if (typeof clientConfig.url === 'string') {
    url = new URL(clientConfig.url);
  } else {
    const svc = (clientConfig.service ?? {}) as Rec;
    const host = `${String(svc.name)}.${String(svc.namespace)}.svc`;
    try {
      await resolve(host);
    } catch {
      throw new HookCallError(`service "${String(svc.namespace)}/${String(svc.name)}" cannot be reached: ${host} does not resolve (cluster service networking is not available here; use clientConfig.url)`);
    }
    url = new URL(`https://${host}:${typeof svc.port === 'number' ? svc.port : 443}${typeof svc.path === 'string' ? svc.path : ''}`);
  }
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  return { url: url.toString(), ca };
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
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': payload.length },
      agent: agentFor(endpoint.ca),
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
    const endpoint = await hookEndpoint(clientConfig, timeoutSeconds, o.resolve);
    return await postReview(endpoint, body, timeoutSeconds, o);
  } catch (err) {
    if (err instanceof HookCallError) throw new Error(err.message.replace(/^failed to call webhook: /, ''), { cause: err });
    throw err;
  }
}
