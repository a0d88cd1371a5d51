import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { AuthorizationConfigError } from './config-error';

/** Where and how to reach a webhook: its https URL and the TLS material of the kubeconfig. */
export interface WebhookEndpoint {
  url: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecureSkipTlsVerify: boolean;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a webhook client configuration (A.4: kubeconfig format; clusters name the remote URL and
 * CA, users the API server's client certificate or token). The current context is used, or the
 * first cluster and user when there is none. Relative paths resolve against the file's directory.
 */
export function loadWebhookKubeconfig(file: string, read: (p: string) => string = (p) => readFileSync(p, 'utf8')): WebhookEndpoint {
  const fail = (why: string) => new AuthorizationConfigError(`webhook kubeconfig ${file}: ${why}`);
  let doc: unknown;
  try {
    doc = YAML.parse(read(file));
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!isRec(doc)) throw fail('not a kubeconfig document');
  const dir = dirname(file);
  const pick = (listKey: string, itemKey: string, name: string | undefined): Rec => {
    const list = Array.isArray(doc[listKey]) ? (doc[listKey] as unknown[]).filter(isRec) : [];
    const item = name === undefined ? list[0] : list.find((x) => x.name === name);
    if (!item) throw fail(name === undefined ? `${listKey}: at least one entry is required` : `${listKey}: no entry named ${JSON.stringify(name)}`);
    return isRec(item[itemKey]) ? item[itemKey] : {};
  };
  let clusterName: string | undefined;
  let userName: string | undefined;
  const current = typeof doc['current-context'] === 'string' ? doc['current-context'] : '';
  if (current) {
    const ctxs = Array.isArray(doc.contexts) ? doc.contexts.filter(isRec) : [];
    const ctx = ctxs.find((c) => c.name === current);
    if (!ctx || !isRec(ctx.context)) throw fail(`current-context ${JSON.stringify(current)} does not exist`);
    clusterName = typeof ctx.context.cluster === 'string' ? ctx.context.cluster : undefined;
    userName = typeof ctx.context.user === 'string' ? ctx.context.user : undefined;
  }
  const cluster = pick('clusters', 'cluster', clusterName);
  const hasUsers = Array.isArray(doc.users) && doc.users.length > 0;
  const user = hasUsers ? pick('users', 'user', userName) : {};
  const server = typeof cluster.server === 'string' ? cluster.server : '';
  if (!server) throw fail('clusters[].cluster.server: Required value');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw fail(`clusters[].cluster.server: Invalid value: ${JSON.stringify(server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail('clusters[].cluster.server: must be an https URL');
  if (url.search) throw fail('clusters[].cluster.server: must not have query parameters');
  const material = (o: Rec, dataKey: string, fileKey: string): string | undefined => {
    if (typeof o[dataKey] === 'string' && o[dataKey]) return Buffer.from(o[dataKey], 'base64').toString('utf8');
    if (typeof o[fileKey] === 'string' && o[fileKey]) {
      const p = o[fileKey];
      try {
        return read(isAbsolute(p) ? p : resolve(dir, p));
      } catch (err) {
        throw fail(`${fileKey}: ${(err as Error).message}`);
      }
    }
    return undefined;
  };
  return {
    url: url.toString(),
    caPem: material(cluster, 'certificate-authority-data', 'certificate-authority'),
    certPem: material(user, 'client-certificate-data', 'client-certificate'),
    keyPem: material(user, 'client-key-data', 'client-key'),
    token: typeof user.token === 'string' && user.token ? user.token : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}
