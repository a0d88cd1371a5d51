/**
 * The authorization attributes of a request to the agent's server, as upstream's kubelet
 * (pkg/kubelet/server/auth.go, GetRequestAttributes with KubeletFineGrainedAuthz, GA in 1.36)
 * derives them: resource "nodes", the node's name, the sub-resource from the path and the verb
 * from the HTTP method. NODE_PATH_RULES is the whole path → sub-resource mapping, one row per
 * path; docs/reference/agent-authorization.md is generated from it (`npm run docs`), and a test
 * fails when the two differ.
 */

export interface NodeRequestAttributes {
  verb: string;
  subresource: string;
  /** The node's name (resource name of the attribute). */
  name: string;
  path: string;
  /** A sub-resource that also grants the request when `subresource` is denied (upstream: proxy for /pods, /healthz, /configz). */
  fallback?: string;
}

/** One row of the mapping: a path prefix (the path itself or anything below it) and what it is authorized as. */
export interface NodePathRule {
  path: string;
  /** nodes/<subresource> is asked first. */
  subresource: string;
  /** nodes/<fallback> is asked when the sub-resource is denied, so that roles written before fine-grained authorization keep working. */
  fallback?: string;
  /** What svc-node serves under the path ('' when nothing: the request is authorized, then answered 404). */
  serves: string;
  /** Where the row comes from upstream, or how it differs. */
  note: string;
}

/** Sub-resource of every path no row names (upstream's default). */
export const DEFAULT_SUBRESOURCE = 'proxy';

/**
 * Every path upstream's kubelet authorizes, and the two health paths svc-node adds, in the order
 * they are matched (the first row whose path is the request path or a parent of it wins).
 * Checked against upstream's auth.go: /stats, /metrics, /logs and /checkpoint have their own
 * sub-resource and nothing else grants them; /pods, /runningPods, /healthz and /configz are
 * fine-grained with nodes/proxy as the fallback; everything else is nodes/proxy, including
 * /containerLogs (nodes/log is for /logs, the node's log files) and /spec (upstream dropped
 * nodes/spec with the cAdvisor endpoint).
 */
export const NODE_PATH_RULES: readonly NodePathRule[] = [
  { path: '/stats', subresource: 'stats', serves: 'the Summary API (/stats/summary)', note: 'upstream' },
  { path: '/metrics', subresource: 'metrics', serves: 'the agent\'s Prometheus metrics; /metrics/resource: resource metrics', note: 'upstream' },
  { path: '/logs', subresource: 'log', serves: '', note: 'upstream: the node\'s log files' },
  { path: '/checkpoint', subresource: 'checkpoint', serves: 'POST: checkpoint a container (spec 4.11)', note: 'upstream' },
  { path: '/pods', subresource: 'pods', fallback: 'proxy', serves: 'the pods the agent runs, with their status', note: 'upstream (fine-grained)' },
  { path: '/runningPods', subresource: 'pods', fallback: 'proxy', serves: '', note: 'upstream (fine-grained)' },
  { path: '/healthz', subresource: 'healthz', fallback: 'proxy', serves: 'health checks', note: 'upstream (fine-grained)' },
  { path: '/livez', subresource: 'healthz', fallback: 'proxy', serves: 'health checks', note: 'svc-node: served like /healthz (the kubelet has no /livez)' },
  { path: '/readyz', subresource: 'healthz', fallback: 'proxy', serves: 'readiness checks', note: 'svc-node: served like /healthz (the kubelet has no /readyz)' },
  { path: '/configz', subresource: 'configz', fallback: 'proxy', serves: 'the merged configuration', note: 'upstream (fine-grained)' },
  { path: '/containerLogs', subresource: 'proxy', serves: 'container logs (what pods/log proxies to)', note: 'upstream: the default; nodes/log does not grant it' },
  { path: '/exec', subresource: 'proxy', serves: 'exec in a container (SPDY/3.1 or WebSocket upgrade)', note: 'upstream: the default' },
  { path: '/attach', subresource: 'proxy', serves: 'attach to a container (SPDY/3.1 or WebSocket upgrade)', note: 'upstream: the default' },
  { path: '/run', subresource: 'proxy', serves: 'POST: run a command, answer its output', note: 'upstream: the default' },
  { path: '/portForward', subresource: 'proxy', serves: 'port-forward into a pod (SPDY/3.1, WebSocket v4 or the SPDY-over-WebSocket tunnel)', note: 'upstream: the default' },
  { path: '/spec', subresource: 'proxy', serves: '', note: 'upstream: the default' },
];

/** True when path is prefix itself or lies below it (so /checkpointx is not /checkpoint). */
function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/');
}

/** The sub-resource for a path; "proxy" for everything not named (upstream's default). */
export function subresourceFor(path: string): string {
  return subresourcesFor(path).subresource;
}

/** The sub-resource for a path and the one that may stand in for it when denied. */
export function subresourcesFor(path: string): { subresource: string; fallback?: string } {
  const rule = NODE_PATH_RULES.find((r) => isSubpath(path, r.path));
  if (!rule) return { subresource: DEFAULT_SUBRESOURCE };
  return rule.fallback ? { subresource: rule.subresource, fallback: rule.fallback } : { subresource: rule.subresource };
}

/** The API verb for an HTTP method (A.1); unknown methods keep their lower-case name. */
export function verbFor(method: string | undefined): string {
  switch ((method ?? 'GET').toUpperCase()) {
    case 'POST':
      return 'create';
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return (method ?? '').toLowerCase();
  }
}

export function requestAttributes(method: string | undefined, path: string, nodeName: string): NodeRequestAttributes {
  return { verb: verbFor(method), ...subresourcesFor(path), name: nodeName, path };
}
