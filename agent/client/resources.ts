/** The resource types the agent talks to, and how their URL paths are built (spec 4.1). */

export interface ResourceRef {
  /** API group; '' for the core group (served under /api/v1). */
  group: string;
  version: string;
  /** Plural lower-case name used in URLs. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

export const nodesResource: ResourceRef = { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false };
export const leasesResource: ResourceRef = { group: 'coordination.svc.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true };
export const csrResource: ResourceRef = {
  group: 'certificates.svc.io',
  version: 'v1',
  resource: 'certificatesigningrequests',
  kind: 'CertificateSigningRequest',
  namespaced: false,
};
export const namespacesResource: ResourceRef = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false };
export const secretsResource: ResourceRef = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true };

export function apiVersionOf(r: ResourceRef): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

export interface PathParts {
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * The URL path of a collection, an item or a sub-resource. Throws when a namespaced item has no
 * namespace or a cluster-scoped one is given one (a programming error, not a server answer).
 */
export function resourcePath(r: ResourceRef, p: PathParts = {}): string {
  const enc = encodeURIComponent;
  let path = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (p.namespace !== undefined && p.namespace !== '') {
    if (!r.namespaced) throw new Error(`${r.resource} is cluster-scoped; no namespace may be given`);
    path += `/namespaces/${enc(p.namespace)}`;
  } else if (r.namespaced && p.name !== undefined) {
    throw new Error(`${r.resource} is namespaced; a namespace is required for ${JSON.stringify(p.name)}`);
  }
  path += `/${r.resource}`;
  if (p.name !== undefined) {
    if (p.name === '') throw new Error(`empty ${r.kind} name`);
    path += `/${enc(p.name)}`;
    if (p.subresource) path += `/${p.subresource}`;
  }
  return path;
}
