import { ApiError } from '../api/errors';
import { canonicalGroup, upstreamGroup } from '../api/group-names';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import type { RequestInfo } from './request-info';

/**
 * Serving every svc.io group under its k8s.io name too (issue 17, item 3; --serve-k8s-io-groups).
 *
 * A request under /apis/X.k8s.io/... is parsed, authorized and handled as one under
 * /apis/X.svc.io/...: the router swaps the group in its RequestInfo for the canonical one and
 * remembers the name the client used (RequestInfo.servedGroup). Storage, admission, validation,
 * watch and authorization therefore see one group, and an object written through one name is
 * read, listed, watched, patched and deleted through the other. Only what goes back to the client
 * is spelled in the client's group: apiVersion of objects, lists, list items, watch events and
 * Table rows, and the group of Status details and error messages (servedBody, servedError).
 *
 * Stored objects keep the canonical svc.io apiVersion: a store written before aliases existed
 * stays valid, both names read the same bytes, and the watch cache keeps one rendering per event.
 */
export class GroupAliases {
  /** upstream name → canonical name, for the groups served. */
  private readonly toCanonical = new Map<string, string>();

  /** canonicalGroups: the groups the registry serves; enabled: --serve-k8s-io-groups. */
  constructor(canonicalGroups: Iterable<string>, readonly enabled: boolean) {
    if (!enabled) return;
    for (const g of canonicalGroups) {
      const up = upstreamGroup(g);
      if (up) this.toCanonical.set(up, g);
    }
  }

  /**
   * Whether group is a canonical (svc.io) name also served under its upstream name: discovery then
   * lists its resources without verbs (see Discovery), so that each resource shows once to
   * clients that list what they can do, while kinds in either name still map to their paths.
   */
  isSecondName(group: string): boolean {
    for (const canonical of this.toCanonical.values()) if (canonical === group) return true;
    return false;
  }

  /** The canonical group an upstream name stands for, when served under it. */
  canonicalOf(group: string): string | undefined {
    return this.toCanonical.get(group);
  }

  /**
   * The request as the server handles it: a resource request under an upstream group name gets
   * the canonical group, and servedGroup the name the client used. Other requests are unchanged.
   */
  apply(info: RequestInfo): RequestInfo {
    if (!info.isResourceRequest) return info;
    const canonical = this.toCanonical.get(info.apiGroup);
    return canonical ? { ...info, apiGroup: canonical, servedGroup: info.apiGroup } : info;
  }

  /**
   * The types as discovery and OpenAPI list them: every registered type, each type of a served
   * group preceded by a view of it under the group's upstream name (the same schema, hooks and
   * storage). Upstream's name comes first because kubectl resolves a bare resource name
   * (`kubectl certificate approve`, `kubectl get roles`, short names) to the first group that
   * serves it in discovery order, and its typed commands accept only the k8s.io group's objects.
   */
  documentTypes(types: readonly ResourceType[]): ResourceType[] {
    if (!this.enabled) return [...types];
    const out: ResourceType[] = [];
    for (const t of types) {
      const up = upstreamGroup(t.group);
      if (up && this.toCanonical.get(up) === t.group) out.push({ ...t, group: up });
      out.push(t);
    }
    return out;
  }
}

/** canonical `group/` prefix of an apiVersion → the served group's; anything else unchanged. */
function servedApiVersion(apiVersion: unknown, canonical: string, served: string): unknown {
  if (typeof apiVersion !== 'string' || !apiVersion.startsWith(`${canonical}/`)) return apiVersion;
  return `${served}${apiVersion.slice(canonical.length)}`;
}

/** An object's apiVersion and managedFields apiVersions moved from group `canonical` to `served` (either direction); copies what it changes. */
export function servedObject(o: unknown, canonical: string, served: string): unknown {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return o;
  const obj = o as Record<string, unknown>;
  const apiVersion = servedApiVersion(obj.apiVersion, canonical, served);
  const managed = servedManagedFields(obj.metadata, canonical, served);
  if (apiVersion === obj.apiVersion && managed === undefined) return obj;
  return managed === undefined ? { ...obj, apiVersion } : { ...obj, apiVersion, metadata: { ...(obj.metadata as object), managedFields: managed } };
}

/** metadata.managedFields with their apiVersion in the served group (upstream records the version written); undefined when none changes. */
function servedManagedFields(metadata: unknown, canonical: string, served: string): unknown[] | undefined {
  const entries = (metadata as { managedFields?: unknown } | undefined)?.managedFields;
  if (!Array.isArray(entries)) return undefined;
  let changed = false;
  const out = entries.map((e: unknown) => {
    const entry = e as { apiVersion?: unknown } | null;
    const apiVersion = servedApiVersion(entry?.apiVersion, canonical, served);
    if (apiVersion === entry?.apiVersion) return e;
    changed = true;
    return { ...entry, apiVersion };
  });
  return changed ? out : undefined;
}

/**
 * A response body spelled in the group the client asked for (info.servedGroup): the object, a
 * list and its items, a Table's row objects, and a Status's details.group. Bodies of requests
 * under the canonical name are returned as they are. Copies what it changes; never mutates.
 */
export function servedBody(info: Pick<RequestInfo, 'apiGroup' | 'servedGroup'>, body: unknown): unknown {
  const served = info.servedGroup;
  if (!served || typeof body !== 'object' || body === null) return body;
  const canonical = canonicalGroup(served);
  const b = body as Record<string, unknown>;
  if (b.kind === 'Status' && b.apiVersion === 'v1') {
    const details = b.details as Record<string, unknown> | undefined;
    return details?.group === canonical ? { ...b, details: { ...details, group: served } } : b;
  }
  const out = servedObject(b, canonical, served) as Record<string, unknown>;
  if (Array.isArray(b.items)) return { ...out, items: b.items.map((i) => servedObject(i, canonical, served)) };
  if (b.kind === 'Table' && Array.isArray(b.rows)) {
    return { ...out, rows: (b.rows as Record<string, unknown>[]).map((r) => (r.object ? { ...r, object: servedObject(r.object, canonical, served) } : r)) };
  }
  return out;
}

/** One object of a watch event in the client's group (see servedBody). */
export function servedEventObject(info: Pick<RequestInfo, 'servedGroup'>, obj: KObject): KObject {
  const served = info.servedGroup;
  return served ? (servedObject(obj, canonicalGroup(served), served) as KObject) : obj;
}

/**
 * An error in the group the client asked for: details.group, and the group where the message
 * names it (`roles.rbac.authorization.svc.io "x" not found`, `in API group "coordination.svc.io"`),
 * as upstream's messages name the group of the request. Other errors are returned unchanged.
 */
export function servedError(info: Pick<RequestInfo, 'servedGroup'> | undefined, err: unknown): unknown {
  const served = info?.servedGroup;
  if (!served || !(err instanceof ApiError)) return err;
  const canonical = canonicalGroup(served);
  const escaped = canonical.replace(/\./g, '\\.');
  const message = err.message.replace(new RegExp(`(?<=[."(])${escaped}(?![a-z0-9.-])`, 'g'), served);
  const details = err.details?.group === canonical ? { ...err.details, group: served } : err.details;
  if (message === err.message && details === err.details) return err;
  return new ApiError(err.reason, message, details, err.code);
}
