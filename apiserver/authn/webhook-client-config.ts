import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../api/lazy-undici';
import YAML from 'yaml';
import { isObject } from '../api/types';

/**
 * Where a webhook is and how to reach it (4.12, 5.4, A.4): read from a kubeconfig-format file
 * whose cluster names the remote service (server URL, CA) and whose user holds the client
 * credentials the server presents (certificate and key, or a token). Shared by webhook token
 * authentication and webhook authorization.
 */
export interface WebhookClientConfig {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
}

export class WebhookConfigError extends Error {
  override readonly name = 'WebhookConfigError';
}

type Entry = Record<string, unknown>;

/**
 * Parses the file's text; `file` anchors relative paths and names the file in errors (which
 * also name the field). The current context picks cluster and user; without one, the first
 * cluster and first user are used.
 */
export function parseWebhookClientConfig(text: string, file: string, readText: (p: string) => string = (p) => readFileSync(p, 'utf8')): WebhookClientConfig {
  const fail = (msg: string): never => {
    throw new WebhookConfigError(`${file}: ${msg}`);
  };
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    return fail(`invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) return fail('not a kubeconfig-format file (expected clusters, users and contexts)');
  const list = (key: string): Entry[] => {
    const v = doc[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) return fail(`${key}: must be a list`);
    return v.filter(isObject);
  };
  const pick = (key: string, body: string, name: string | undefined): { name: string; body: Entry } | undefined => {
    const items = list(key);
    const it = name === undefined ? items[0] : items.find((i) => i.name === name);
    if (!it) return name === undefined ? undefined : fail(`${key}: no entry named ${JSON.stringify(name)}`);
    const b = it[body];
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the file's value, of whatever YAML type, as String() prints it
    return { name: String(it.name ?? ''), body: isObject(b) ? b : {} };
  };
  let clusterName: string | undefined;
  let userName: string | undefined;
  const current = doc['current-context'];
  if (typeof current === 'string' && current !== '') {
    const ctx = pick('contexts', 'context', current)!;
    clusterName = typeof ctx.body.cluster === 'string' ? ctx.body.cluster : undefined;
    userName = typeof ctx.body.user === 'string' ? ctx.body.user : undefined;
  }
  const cluster = pick('clusters', 'cluster', clusterName);
  if (!cluster) return fail('clusters: at least one cluster naming the webhook server is required');
  const cw = `clusters[${cluster.name}].cluster`;
  const str = (o: Entry, k: string, where: string): string | undefined => {
    const v = o[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') return fail(`${where}.${k}: must be a string`);
    return v;
  };
  const path = (p: string) => (isAbsolute(p) ? p : resolve(dirname(file), p));
  const readFile = (p: string, field: string): string => {
    try {
      return readText(path(p));
    } catch (err) {
      return fail(`${field}: cannot read ${path(p)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const data = (v: string, field: string): string => {
    const t = Buffer.from(v, 'base64').toString('utf8');
    if (!t.includes('-----BEGIN')) fail(`${field}: not base64-encoded PEM data`);
    return t;
  };
  const server = str(cluster.body, 'server', cw);
  if (!server) return fail(`${cw}.server: Required value`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return fail(`${cw}.server: invalid URL ${JSON.stringify(server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`${cw}.server: must be an https URL`);
  const out: WebhookClientConfig = { server };
  const caData = str(cluster.body, 'certificate-authority-data', cw);
  const caFile = str(cluster.body, 'certificate-authority', cw);
  if (caData) out.caPem = data(caData, `${cw}.certificate-authority-data`);
  else if (caFile) out.caPem = readFile(caFile, `${cw}.certificate-authority`);
  if (cluster.body['insecure-skip-tls-verify'] === true) out.insecureSkipTlsVerify = true;
  const sn = str(cluster.body, 'tls-server-name', cw);
  if (sn) out.tlsServerName = sn;

  const user = pick('users', 'user', userName);
  if (user) {
    const uw = `users[${user.name}].user`;
    const certData = str(user.body, 'client-certificate-data', uw);
    const certFile = str(user.body, 'client-certificate', uw);
    const keyData = str(user.body, 'client-key-data', uw);
    const keyFile = str(user.body, 'client-key', uw);
    if (certData) out.certPem = data(certData, `${uw}.client-certificate-data`);
    else if (certFile) out.certPem = readFile(certFile, `${uw}.client-certificate`);
    if (keyData) out.keyPem = data(keyData, `${uw}.client-key-data`);
    else if (keyFile) out.keyPem = readFile(keyFile, `${uw}.client-key`);
    if ((out.certPem === undefined) !== (out.keyPem === undefined)) fail(`${uw}: client certificate and client key must be given together`);
    const token = str(user.body, 'token', uw);
    const tokenFile = str(user.body, 'tokenFile', uw);
    if (token) out.token = token;
    else if (tokenFile) out.token = readFile(tokenFile, `${uw}.tokenFile`).trim();
  }
  return out;
}

export function loadWebhookClientConfig(file: string): WebhookClientConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new WebhookConfigError(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseWebhookClientConfig(text, file);
}

/** A JSON POST client for one webhook; each call is bounded by timeoutMs. */
export class WebhookClient {
  private readonly agent: Agent;
  constructor(
    private readonly cfg: WebhookClientConfig,
    private readonly timeoutMs: number,
  ) {
    this.agent = new (undici().Agent)({
      connect: {
        ca: cfg.caPem,
        cert: cfg.certPem,
        key: cfg.keyPem,
        rejectUnauthorized: !cfg.insecureSkipTlsVerify,
        ...(cfg.tlsServerName ? { servername: cfg.tlsServerName } : {}),
      },
      connectTimeout: timeoutMs,
    });
  }

  /** POSTs the body and resolves with the status and parsed JSON answer; rejects on network failure, timeout or a non-JSON answer. */
  async post(body: unknown): Promise<{ status: number; body: unknown }> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let res: Dispatcher.ResponseData;
    try {
      res = await undici().request(this.cfg.server, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.cfg.token ? { authorization: `Bearer ${this.cfg.token}` } : {}) },
        body: JSON.stringify(body),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (err) {
      if (signal.aborted) throw new Error(`webhook ${this.cfg.server} did not answer within ${this.timeoutMs} ms`, { cause: err });
      throw new Error(`webhook ${this.cfg.server}: ${(err as Error).message}`, { cause: err });
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw new Error(signal.aborted ? `webhook ${this.cfg.server} did not answer within ${this.timeoutMs} ms` : `webhook ${this.cfg.server}: ${(err as Error).message}`, { cause: err });
    }
    try {
      return { status: res.statusCode, body: JSON.parse(text) as unknown };
    } catch {
      throw new Error(`webhook ${this.cfg.server} answered ${res.statusCode} with a body that is not JSON`);
    }
  }

  /** POSTs the body and resolves with the status alone, whatever the answer's body (audit webhooks answer nothing useful). */
  async postStatus(body: unknown): Promise<number> {
    const res = await undici().request(this.cfg.server, {
      method: 'POST',
      dispatcher: this.agent,
      signal: AbortSignal.timeout(this.timeoutMs),
      headers: { 'content-type': 'application/json', ...(this.cfg.token ? { authorization: `Bearer ${this.cfg.token}` } : {}) },
      body: JSON.stringify(body),
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    await res.body.dump();
    return res.statusCode;
  }

  /** Closes pooled connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
