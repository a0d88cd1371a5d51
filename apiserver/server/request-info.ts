import { readQueryBool } from '../../common/query-bool';
import { ApiError } from '../api/errors';
import { AUTHZ_GROUP, UPSTREAM_AUTHZ_GROUP } from '../registry/types/authorization-reviews';

/**
 * What a request is about, parsed from method and path as upstream's RequestInfoFactory does:
 * resource requests under /api/v1 and /apis/{group}/{version}, everything else non-resource.
 * Authorization (A.1) and the handlers both read it.
 */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** API verb (get, list, watch, create, update, patch, delete, deletecollection) or lower-case HTTP method for non-resource paths. */
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /**
   * The group name the client used when it differs from apiGroup: a request under a group's
   * k8s.io name is handled under the canonical svc.io name (server/group-alias.ts), and answered
   * in this one.
   */
  servedGroup?: string;
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  const parts = path.split('/').filter((p) => p !== '');
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    info.apiPrefix = 'api';
    info.apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    info.apiPrefix = 'apis';
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    rest = parts.slice(3);
  } else {
    return info;
  }
  if (rest.length === 0) return info; // group/version discovery is a non-resource request
  info.isResourceRequest = true;
  const m = method.toUpperCase();
  info.verb = m === 'POST' ? 'create' : m === 'PUT' ? 'update' : m === 'PATCH' ? 'patch' : m === 'DELETE' ? 'delete' : 'get';
  // The legacy watch paths, {prefix}/watch/[namespaces/{ns}/]{resource}[/{name}]: deprecated
  // upstream but still served (ruby kubeclient watches through them). As upstream's
  // RequestInfoFactory, "watch" is a special verb: the verb whatever the method (the router
  // answers anything but GET with 405), and the rest of the path is read as usual.
  const legacyWatch = rest[0] === 'watch' && rest.length >= 2;
  if (legacyWatch) {
    info.verb = 'watch';
    rest = rest.slice(1);
  }

  // As upstream: namespaces/{ns}/{resource}... is namespaced, except the namespace's own
  // sub-resources (status, finalize), where the namespace is also the object's name.
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    info.namespace = rest[1];
    if (rest.length > 2 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
  }
  info.resource = rest[0] ?? '';
  if (rest.length >= 2) info.name = rest[1];
  // As upstream, a proxy sub-resource is "proxy" whatever path follows it (nodes/{name}/proxy/{path}):
  // authorization is for nodes/proxy, and the handler reads the rest from the path.
  if (rest.length >= 3) info.subresource = rest[2] === 'proxy' ? 'proxy' : rest.slice(2).join('/');

  if (info.verb === 'get') {
    const watch = queryBool(query, 'watch');
    if (!info.name) info.verb = watch ? 'watch' : 'list';
    else if (watch) info.verb = 'watch';
  }
  if (!info.name && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

/**
 * A boolean query parameter (watch, pretty, allowWatchBookmarks, sendInitialEvents,
 * orphanDependents, follow...): absent is false, empty true, else Go's strconv.ParseBool
 * spellings (`True` from the Python client is true); anything else is a 400 naming the parameter
 * (common/query-bool.ts says where that differs from upstream).
 */
export function queryBool(query: URLSearchParams, name: string): boolean {
  const b = readQueryBool(query, name);
  if (typeof b !== 'boolean') throw new ApiError('BadRequest', b.error);
  return b;
}

const REVIEW_RESOURCES = new Set(['subjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews']);

/**
 * Maps a request under /apis/authorization.k8s.io/... for a review resource to
 * authorization.svc.io, so it is authorized and routed as the svc group (stock kubectl's
 * `auth can-i` uses the upstream group name). Other requests are returned unchanged. A path
 * rewrite before authentication: the router applies it to every request it parses.
 */
export function reviewAlias(info: RequestInfo): RequestInfo {
  if (!info.isResourceRequest || info.apiGroup !== UPSTREAM_AUTHZ_GROUP || !REVIEW_RESOURCES.has(info.resource)) return info;
  return { ...info, apiGroup: AUTHZ_GROUP };
}
