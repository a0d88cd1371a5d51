/**
 * Discovery with the remote group versions merged in (upstream's aggregator serves /apis from
 * every APIService): the legacy group list gets each remote group and version (listed whether or
 * not the server answers, so clients report it unavailable rather than unknown, as upstream);
 * the aggregated document gets the resources each available server listed, converted from its
 * APIResourceList, and an unavailable one's versions as Stale with no resources.
 */
import type { RemoteApis, RemoteState } from './remote-apis';

type Obj = Record<string, unknown>;

/** Adds the remote groups and versions to a legacy APIGroupList (in place; returns it). */
export function mergeGroupList(list: Obj, remote: RemoteApis): Obj {
  const groups = (list.groups as Obj[] | undefined) ?? [];
  for (const { api } of remote.all()) {
    let g = groups.find((x) => x.name === api.group);
    if (!g) {
      g = { name: api.group, versions: [], preferredVersion: { groupVersion: `${api.group}/${api.version}`, version: api.version } };
      groups.push(g);
    }
    const versions = g.versions as Obj[];
    if (!versions.some((v) => v.version === api.version)) versions.push({ groupVersion: `${api.group}/${api.version}`, version: api.version });
  }
  list.groups = groups;
  return list;
}

/** The APIGroupDiscovery versions of one remote APIService. */
function aggregatedVersion(group: string, version: string, state: RemoteState): Obj {
  if (!state.available || !state.resources) return { version, resources: [], freshness: 'Stale' };
  const all = (state.resources.resources as Obj[] | undefined) ?? [];
  const top = all.filter((r) => !String(r.name).includes('/'));
  const resources = top.map((r) => {
    const kind = { group, version, kind: r.kind };
    const subresources = all
      .filter((s) => String(s.name).startsWith(`${String(r.name)}/`))
      .map((s) => ({ subresource: String(s.name).split('/')[1], responseKind: { group, version, kind: s.kind }, verbs: s.verbs ?? [] }));
    return {
      resource: r.name,
      responseKind: kind,
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: r.verbs ?? [],
      ...(Array.isArray(r.shortNames) ? { shortNames: r.shortNames } : {}),
      ...(Array.isArray(r.categories) ? { categories: r.categories } : {}),
      ...(subresources.length ? { subresources } : {}),
    };
  });
  return { version, resources, freshness: 'Current' };
}

/** Adds the remote groups to an aggregated APIGroupDiscoveryList (in place; returns it). */
export function mergeAggregated(doc: Obj, remote: RemoteApis): Obj {
  const items = (doc.items as Obj[] | undefined) ?? [];
  for (const { api, state } of remote.all()) {
    let item = items.find((i) => (i.metadata as Obj | undefined)?.name === api.group);
    if (!item) {
      item = { metadata: { name: api.group, creationTimestamp: null }, versions: [] };
      items.push(item);
    }
    const versions = item.versions as Obj[];
    if (!versions.some((v) => v.version === api.version)) versions.push(aggregatedVersion(api.group, api.version, state));
  }
  doc.items = items;
  return doc;
}
