/**
 * Reads a kubeconfig (clientcmd's v1 Config) into a RestConfig: the current context's cluster
 * (server, certificate-authority or -data, insecure-skip-tls-verify, tls-server-name) and user
 * (client-certificate/-key files or -data, token or tokenFile). Relative file paths resolve
 * against the kubeconfig's own directory, as clientcmd does. Exec plugins (spec 5.8) and
 * username/password are not supported by the agent; they fail with a message that says so.
 */
import { promises as fsp } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { isObject } from '../../apiserver/api/types';
import type { RestConfig } from './rest-config';

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`kubeconfig ${file}: ${message}`);
  }
}

export interface KubeconfigFs {
  /** Reads a whole file; rejects with a Node fs error. */
  readFile(path: string): Promise<string>;
}

const realFs: KubeconfigFs = { readFile: (p) => fsp.readFile(p, 'utf8') };

type Entry = Record<string, unknown>;

function named(file: string, doc: Entry, listKey: string, itemKey: string, name: string): Entry {
  const list = doc[listKey];
  if (list !== undefined && list !== null && !Array.isArray(list)) throw new KubeconfigError(file, `field ${listKey} must be a list`);
  for (const item of (list as unknown[] | undefined) ?? []) {
    if (isObject(item) && item['name'] === name) {
      const body = item[itemKey];
      if (body === undefined || body === null) return {};
      if (!isObject(body)) throw new KubeconfigError(file, `${listKey}[name=${name}].${itemKey} must be an object`);
      return body;
    }
  }
  throw new KubeconfigError(file, `${listKey.replace(/s$/, '')} ${JSON.stringify(name)} (named by the current context) does not exist`);
}

function str(file: string, obj: Entry, key: string, where: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new KubeconfigError(file, `field ${where}.${key} must be a string`);
  return v;
}

function decodeData(file: string, value: string, field: string): string {
  const text = Buffer.from(value, 'base64').toString('utf8');
  if (!text.includes('-----BEGIN')) throw new KubeconfigError(file, `field ${field} is not base64-encoded PEM data`);
  return text;
}

/** Only the blocks of one kind from a PEM file: the kubelet's -current.pem holds cert and key together. */
function blocksOf(text: string, wantKey: boolean): string {
  const blocks = text.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  const picked = blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0]!) === wantKey);
  return picked.length > 0 ? picked.join('\n') + '\n' : text;
}

/** Parses kubeconfig text; `file` names it in errors and anchors relative paths. Reads referenced files through fs. */
export async function parseKubeconfig(text: string, file: string, fs: KubeconfigFs = realFs): Promise<RestConfig> {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { prettyErrors: false });
  } catch (e) {
    throw new KubeconfigError(file, `invalid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw new KubeconfigError(file, 'not a kubeconfig (expected a mapping with clusters, users and contexts)');
  const dir = dirname(file);
  const path = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
  const read = async (p: string, field: string): Promise<string> => {
    try {
      return await fs.readFile(p);
    } catch (e) {
      throw new KubeconfigError(file, `cannot read ${field} ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };

  const contextName = doc['current-context'];
  if (typeof contextName !== 'string' || contextName === '') throw new KubeconfigError(file, 'current-context is not set');
  const context = named(file, doc, 'contexts', 'context', contextName);
  const clusterName = str(file, context, 'cluster', `contexts[${contextName}].context`);
  if (!clusterName) throw new KubeconfigError(file, `context ${JSON.stringify(contextName)} names no cluster`);
  const cluster = named(file, doc, 'clusters', 'cluster', clusterName);
  const userName = str(file, context, 'user', `contexts[${contextName}].context`);
  const user = userName ? named(file, doc, 'users', 'user', userName) : {};

  const cw = `clusters[${clusterName}].cluster`;
  const server = str(file, cluster, 'server', cw);
  if (!server) throw new KubeconfigError(file, `cluster ${JSON.stringify(clusterName)} has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(file, `cluster ${JSON.stringify(clusterName)}: invalid server URL ${JSON.stringify(server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeconfigError(file, `cluster ${JSON.stringify(clusterName)}: server URL must be https (got ${url.protocol})`);
  }
  const out: RestConfig = { server: server.replace(/\/+$/, ''), source: file };
  const caData = str(file, cluster, 'certificate-authority-data', cw);
  const caFile = str(file, cluster, 'certificate-authority', cw);
  if (caData) out.caPem = decodeData(file, caData, `${cw}.certificate-authority-data`);
  else if (caFile) out.caPem = await read(path(caFile), 'certificate-authority');
  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure === true) out.insecureSkipTLSVerify = true;
  const serverName = str(file, cluster, 'tls-server-name', cw);
  if (serverName) out.tlsServerName = serverName;

  const uw = `users[${userName}].user`;
  if (user['exec'] !== undefined) throw new KubeconfigError(file, `user ${JSON.stringify(userName)}: exec credential plugins are not supported by svc-node`);
  if (user['auth-provider'] !== undefined) throw new KubeconfigError(file, `user ${JSON.stringify(userName)}: auth-provider is not supported by svc-node`);
  if (user['username'] !== undefined || user['password'] !== undefined) {
    throw new KubeconfigError(file, `user ${JSON.stringify(userName)}: basic authentication (username/password) is not supported`);
  }
  const certData = str(file, user, 'client-certificate-data', uw);
  const certFile = str(file, user, 'client-certificate', uw);
  const keyData = str(file, user, 'client-key-data', uw);
  const keyFile = str(file, user, 'client-key', uw);
  if (certData) out.certPem = decodeData(file, certData, `${uw}.client-certificate-data`);
  else if (certFile) {
    out.certFile = path(certFile);
    out.certPem = blocksOf(await read(out.certFile, 'client-certificate'), false);
  }
  if (keyData) out.keyPem = decodeData(file, keyData, `${uw}.client-key-data`);
  else if (keyFile) {
    out.keyFile = path(keyFile);
    out.keyPem = blocksOf(await read(out.keyFile, 'client-key'), true);
  }
  if ((out.certPem === undefined) !== (out.keyPem === undefined)) {
    throw new KubeconfigError(file, `user ${JSON.stringify(userName)}: client certificate and client key must be given together`);
  }
  const token = str(file, user, 'token', uw);
  const tokenFile = str(file, user, 'tokenFile', uw);
  if (token) out.token = token;
  else if (tokenFile) out.token = (await read(path(tokenFile), 'tokenFile')).trim();
  return out;
}

/** Reads and parses the kubeconfig at `file`; rejects with KubeconfigError (naming the file) on any problem. */
export async function loadKubeconfig(file: string, fs: KubeconfigFs = realFs): Promise<RestConfig> {
  let text: string;
  try {
    text = await fs.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KubeconfigError(file, code === 'ENOENT' ? 'no such file' : `cannot read: ${code ?? (e as Error).message}`);
  }
  return parseKubeconfig(text, file, fs);
}
