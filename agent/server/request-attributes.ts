/**
 * The authorization attributes of a request to the agent's server, as upstream's kubelet
 * (pkg/kubelet/server/auth.go, GetRequestAttributes with KubeletFineGrainedAuthz, GA in 1.36)
 * derives them: resource "nodes", the node's name, the sub-resource from the path and the verb
 * from the HTTP method. Checked against upstream: auth.go's GetRequestAttributes (stats, metrics,
 * log for /stats, /metrics, /logs, nodes/proxy for the rest) and, for the fine-grained additions,
 * the KubeletFineGrainedAuthz e2e test (test/e2e/node: /healthz via nodes/healthz or nodes/proxy)
 * and its documentation: /spec and /checkpoint have their own sub-resource (spec, checkpoint) and
 * nothing else grants them; /pods and /runningPods (pods), /healthz (healthz) and /configz (configz) are
 * checked first with their own sub-resource and, when that is denied, again as nodes/proxy, so
 * that roles written before fine-grained authorization keep working; everything else is
 * nodes/proxy. Our deliberate differences: /containerLogs is nodes/log (upstream leaves it to the
 * proxy default) so that a log reader needs no proxy rights, and /livez and /readyz, which the
 * kubelet does not serve, are treated like /healthz.
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

const SUBRESOURCES: readonly (readonly [string, string, string?])[] = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/containerLogs', 'log'],
  ['/spec', 'spec'],
  ['/checkpoint', 'checkpoint'],
  ['/pods', 'pods', 'proxy'],
  ['/runningPods', 'pods', 'proxy'],
  ['/healthz', 'healthz', 'proxy'],
  ['/livez', 'healthz', 'proxy'],
  ['/readyz', 'healthz', 'proxy'],
  ['/configz', 'configz', 'proxy'],
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
  for (const [prefix, sub, fallback] of SUBRESOURCES) if (isSubpath(path, prefix)) return fallback ? { subresource: sub, fallback } : { subresource: sub };
  return { subresource: 'proxy' };
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
