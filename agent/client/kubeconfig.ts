/**
 * Reads a kubeconfig (clientcmd's v1 Config) into a RestConfig: the current context's cluster
 * (server, certificate-authority or -data, insecure-skip-tls-verify, tls-server-name) and user
 * (client-certificate/-key files or -data, token or tokenFile). Relative file paths resolve
 * against the kubeconfig's own directory, as clientcmd does. A user's exec block (spec 5.8)
 * becomes an ExecCredentialSource on the RestConfig (run lazily, at the first request; see
 * exec-credential.ts). auth-provider and username/password are not supported by the agent; they
 * fail with a message that says so.
 */
import { promises as fsp } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { isObject } from '../../apiserver/api/types';
import { ExecCredentialError, ExecCredentialSource, type ExecClusterInfo, type ExecConfig, type InteractiveMode } from './exec-credential';
import type { RestConfig } from './rest-config';
import { InvalidArgumentError } from '../errors';

export class KubeconfigError extends InvalidArgumentError {
  override readonly name = 'KubeconfigError';
  override readonly code = 'SVC_NODE_ERR_KUBECONFIG';
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
  const picked = blocks.filter((b) => /PRIVATE KEY-----/.test(b.split('\n')[0]) === wantKey);
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
  if (user['exec'] !== undefined && user['exec'] !== null) {
    // client-go lets a static credential sit beside exec and lets either win per request; a daemon
    // with two identities is a configuration mistake we refuse instead (one identity per node).
    if (out.token !== undefined || out.certPem !== undefined) {
      throw new KubeconfigError(file, `user ${JSON.stringify(userName)}: exec cannot be combined with token, tokenFile or a client certificate`);
    }
    out.exec = execSource(file, user['exec'], `${uw}.exec`, dir, clusterInfo(out, cluster));
  }
  return out;
}

/** How long one exec plugin run may take before it is killed. */
export const EXEC_TIMEOUT_MS = 60_000;

/** The spec.cluster an exec plugin gets with provideClusterInfo (ExecCredential spec.cluster). */
function clusterInfo(out: RestConfig, cluster: Entry): ExecClusterInfo {
  const info: ExecClusterInfo = { server: out.server };
  if (out.caPem) info['certificate-authority-data'] = Buffer.from(out.caPem).toString('base64');
  if (out.tlsServerName) info['tls-server-name'] = out.tlsServerName;
  if (out.insecureSkipTLSVerify) info['insecure-skip-tls-verify'] = true;
  const proxy = cluster['proxy-url'];
  if (typeof proxy === 'string' && proxy !== '') info['proxy-url'] = proxy;
  if (cluster['disable-compression'] === true) info['disable-compression'] = true;
  // Per-cluster plugin configuration lives in the cluster's extensions under the exec group's name;
  // our group is client.authentication.svc.io, and the upstream name is honoured too so a stock
  // kubeconfig keeps working.
  const ext = cluster['extensions'];
  if (Array.isArray(ext)) {
    for (const name of ['client.authentication.svc.io/exec', 'client.authentication.k8s.io/exec']) {
      const e: unknown = ext.find((x) => isObject(x) && x['name'] === name);
      if (isObject(e) && e['extension'] !== undefined) {
        info.config = e['extension'];
        break;
      }
    }
  }
  return info;
}

/** The user.exec block into a credential source; field errors name the field. */
function execSource(file: string, raw: unknown, where: string, dir: string, cluster: ExecClusterInfo): ExecCredentialSource {
  if (!isObject(raw)) throw new KubeconfigError(file, `field ${where} must be an object`);
  const s = (k: string): string | undefined => str(file, raw, k, where);
  const exec: ExecConfig = { command: s('command') ?? '', apiVersion: s('apiVersion') ?? '' };
  const args = raw['args'];
  if (args !== undefined && args !== null) {
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new KubeconfigError(file, `field ${where}.args must be a list of strings`);
    exec.args = args;
  }
  const env = raw['env'];
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) throw new KubeconfigError(file, `field ${where}.env must be a list`);
    exec.env = env.map((e, i) => {
      if (!isObject(e) || typeof e['name'] !== 'string' || e['name'] === '' || typeof e['value'] !== 'string') {
        throw new KubeconfigError(file, `field ${where}.env[${i}] must have a name and a string value`);
      }
      return { name: e['name'], value: e['value'] };
    });
  }
  const hint = s('installHint');
  if (hint) exec.installHint = hint;
  const pci = raw['provideClusterInfo'];
  if (pci !== undefined && pci !== null && typeof pci !== 'boolean') throw new KubeconfigError(file, `field ${where}.provideClusterInfo must be a boolean`);
  if (pci === true) exec.provideClusterInfo = true;
  const mode = s('interactiveMode');
  if (mode) exec.interactiveMode = mode as InteractiveMode;
  let source: ExecCredentialSource;
  try {
    // svc-node is a daemon: standard input is never a terminal it may prompt on, so IfAvailable
    // runs the plugin non-interactively (spec.interactive false) and Always is refused here, at
    // load, rather than at the first request. A plugin that hangs is killed after a minute
    // (client-go waits forever; a node agent must not).
    source = new ExecCredentialSource(exec, dir, cluster, { stdinIsTTY: false, timeoutMs: EXEC_TIMEOUT_MS });
  } catch (e) {
    if (e instanceof ExecCredentialError) throw new KubeconfigError(file, `${where}: ${e.message}`);
    throw e;
  }
  if (exec.interactiveMode === 'Always') {
    throw new KubeconfigError(file, `${where}.interactiveMode: Always requires a terminal and svc-node runs without one; use Never or IfAvailable`);
  }
  return source;
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
