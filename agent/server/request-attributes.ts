/**
 * The authorization attributes of a request to the agent's server, as upstream's kubelet
 * (pkg/kubelet/server/auth.go) derives them: resource "nodes", the node's name, the sub-resource
 * from the path and the verb from the HTTP method. One deliberate difference: /containerLogs maps
 * to nodes/log (upstream leaves it to the nodes/proxy default) so that a log reader needs no proxy
 * rights; /logs stays nodes/log as upstream.
 */

export interface NodeRequestAttributes {
  verb: string;
  subresource: string;
  /** The node's name (resource name of the attribute). */
  name: string;
  path: string;
}

const SUBRESOURCES: readonly (readonly [string, string])[] = [
  ['/checkpoint', 'checkpoint'],
  ['/containerLogs', 'log'],
  ['/logs', 'log'],
  ['/metrics', 'metrics'],
  ['/stats', 'stats'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/spec', 'spec'],
];

/** True when path is prefix itself or lies below it (so /checkpointx is not /checkpoint). */
function isSubpath(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/');
}

/** The sub-resource for a path; "proxy" for everything not named (upstream's default). */
export function subresourceFor(path: string): string {
  for (const [prefix, sub] of SUBRESOURCES) if (isSubpath(path, prefix)) return sub;
  return 'proxy';
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
  return { verb: verbFor(method), subresource: subresourceFor(path), name: nodeName, path };
}
