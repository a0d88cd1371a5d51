/**
 * The connect sub-resources pods/exec, pods/attach and pods/portforward (upstream's ExecREST,
 * AttachREST and PortForwardREST): an upgrade request (GET for WebSocket clients, POST for SPDY)
 * is checked, its pod and node looked up, and the stream proxied byte for byte (upgrade-proxy.ts)
 * to the node agent's kubelet path with the API server's kubelet-client certificate:
 * /exec/{ns}/{pod}/{container}?command=..&input=1&output=1&error=1&tty=1, /attach/... without
 * command, /portForward/{ns}/{pod}?port=... . The caller was authorized by the router for the
 * verb of the method (get for GET, create for POST); a GET is also checked for create, as upstream
 * with AuthorizePodWebsocketUpgradeCreatePermission (on by default since 1.31): a WebSocket exec
 * must not need less than a SPDY one.
 * Differs from upstream: with no container named in a pod of several, the container the
 * `kubectl.kubernetes.io/default-container` annotation names is used (upstream leaves that to
 * kubectl and answers 400).
 */
import { ApiError, errors } from '../api/errors';
import type { KObject } from '../api/types';
import type { KeyPairPem } from '../pki/certs';
import type { ResourceType } from '../registry/resource-type';
import { queryBool } from '../server/request-info';
import type { ResourceRequest } from './context';
import { agentEndpoint } from './pod-log';
import type { AgentSessions } from './agent-sessions';
import type { DecodedVersions } from './decoded-versions';
import { DEFAULT_STREAM_IDLE_MS, proxyUpgrade, type UpgradeLimits } from './upgrade-proxy';

export type ConnectKind = 'exec' | 'attach' | 'portforward';

/** The annotation naming a pod's default container (kubectl's, honoured here server-side too). */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** How the connect handlers reach agents. */
export interface PodConnectConfig {
  client: KeyPairPem;
  /** CA for the agents' serving certificates; undefined: not verified (upstream's default). */
  caPem?: string;
  nodes: ResourceType;
  limits?: Partial<UpgradeLimits>;
  /** The pods and nodes read, kept decoded by version (shared with pods/log). */
  versions: DecodedVersions;
  /** The agents' shared HTTP/2 connections: exec and attach go over them (port-forward keeps a connection of its own: a bulk transfer on a shared one would hold up the other streams). */
  sessions?: AgentSessions;
}

/** A boolean option of PodExecOptions/PodAttachOptions; stdout and stderr default to true, as upstream's defaulting. */
function option(query: URLSearchParams, name: string, dflt: boolean): boolean {
  return query.has(name) ? queryBool(query, name) : dflt;
}

/**
 * The agent path and query for a connect request: the translation of PodExecOptions,
 * PodAttachOptions and PodPortForwardOptions to the kubelet's parameters (input, output, error,
 * tty, command, port), as upstream's ExecLocation/AttachLocation/PortForwardLocation.
 */
export function kubeletStreamPath(kind: ConnectKind, namespace: string, pod: string, container: string, query: URLSearchParams): string {
  const q = new URLSearchParams();
  const seg = (s: string) => encodeURIComponent(s);
  if (kind === 'portforward') {
    for (const p of query.getAll('ports')) {
      const n = Number(p);
      if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw errors.badRequest(`ports: Invalid value: "${p}": must be a port number between 1 and 65535`);
      q.append('port', String(n));
    }
    return `/portForward/${seg(namespace)}/${seg(pod)}${q.size ? `?${q.toString()}` : ''}`;
  }
  const stdin = option(query, 'stdin', false);
  const stdout = option(query, 'stdout', true);
  const stderr = option(query, 'stderr', true);
  const tty = option(query, 'tty', false);
  if (stdin) q.append('input', '1');
  if (stdout) q.append('output', '1');
  if (stderr) q.append('error', '1');
  if (tty) q.append('tty', '1');
  if (kind === 'exec') {
    const command = query.getAll('command');
    if (command.length === 0) throw errors.badRequest('command: Required value: you must specify at least one command for the container');
    for (const c of command) q.append('command', c);
  }
  return `/${kind}/${seg(namespace)}/${seg(pod)}/${seg(container)}?${q.toString()}`;
}

type Named = Array<{ name: string }>;

/**
 * The container a stream is for, as upstream's streamLocation: the one named must be one of the
 * pod's containers, init containers or ephemeral containers; unnamed, the pod's only container,
 * else (here) the default-container annotation's, else 400 listing the choices.
 */
export function streamContainer(pod: KObject, container: string): string {
  const name = pod.metadata.name;
  const spec = (pod.spec ?? {}) as Partial<Record<'containers' | 'initContainers' | 'ephemeralContainers', Named>>;
  const names = (l?: Named) => (l ?? []).map((c) => c.name);
  const containers = names(spec.containers);
  if (container) {
    if (![...containers, ...names(spec.initContainers), ...names(spec.ephemeralContainers)].includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }
  if (containers.length === 1) return containers[0];
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && containers.includes(annotated)) return annotated;
  if (containers.length === 0) throw errors.badRequest(`a container name must be specified for pod ${name}`);
  const inits = names(spec.initContainers);
  throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]${inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''}`);
}

/** The handler of pods/{kind}. */
export function podConnectHandler(kind: ConnectKind, k: PodConnectConfig): (r: ResourceRequest) => Promise<void> {
  return async (r) => {
    const method = r.req.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST') throw errors.methodNotAllowed(`pods/${kind} supports only GET and POST, not ${method}`);
    if (method === 'GET') {
      if (!r.authorizeVerb) throw errors.internal(`no authorizer provided, unable to authorize a create on pods/${kind}`);
      await r.authorizeVerb('create');
    }
    const pod = await k.versions.get(r.store, r.type, r.info.namespace, r.info.name);
    const container = kind === 'portforward' ? '' : streamContainer(pod, r.query.get('container') ?? '');
    const path = kubeletStreamPath(kind, r.info.namespace, r.info.name, container, r.query);
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) throw errors.badRequest(`pod ${r.info.name} does not have a host assigned`);
    const node = await k.versions.get(r.store, k.nodes, '', nodeName);
    const { host, port } = agentEndpoint(node);
    if (!r.upgrade) throw new ApiError('BadRequest', 'Upgrade request required');
    await proxyUpgrade(
      r,
      { scheme: 'https', host, port, path, cert: k.client, ...(k.caPem ? { caPem: k.caPem } : {}), ...(k.sessions && kind !== 'portforward' ? { sessions: k.sessions } : {}), describe: `the node agent of ${nodeName}` },
      { idleTimeoutMs: k.limits?.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_MS, ...(k.limits?.handshakeTimeoutMs ? { handshakeTimeoutMs: k.limits.handshakeTimeoutMs } : {}) },
    );
  };
}
