import type { ResourceType } from '../registry/resource-type';

/**
 * Legacy discovery documents (/api, /apis, /apis/{group}, /apis/{group}/{version}, /api/v1) that
 * kubectl and client libraries read to map kinds to URLs. Aggregated discovery (apidiscovery v2)
 * is not offered; clients fall back to these, as upstream clients do against older servers.
 */
export class Discovery {
  constructor(
    private readonly types: () => readonly ResourceType[],
    /** Virtual types (the review APIs) that can only be created. */
    private readonly createOnly: (t: ResourceType) => boolean = () => false,
  ) {}

  versions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  groups(): Record<string, unknown> {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.groupNames().map((g) => this.group(g)!) };
  }

  group(name: string): Record<string, unknown> | undefined {
    const versions = [...new Set(this.types().filter((t) => t.group === name).map((t) => t.version))];
    if (versions.length === 0 || name === '') return undefined;
    const gv = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { kind: 'APIGroup', apiVersion: 'v1', name, versions: gv, preferredVersion: gv[0] };
  }

  resources(group: string, version: string): Record<string, unknown> | undefined {
    const ts = this.types().filter((t) => t.group === group && t.version === version);
    if (ts.length === 0) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const t of ts) {
      resources.push({
        name: t.resource,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: this.createOnly(t) ? ['create'] : ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        ...(t.shortNames?.length ? { shortNames: t.shortNames } : {}),
        ...(t.categories?.length ? { categories: t.categories } : {}),
      });
      if (t.hasStatus && !this.createOnly(t)) {
        resources.push({ name: `${t.resource}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }

  private groupNames(): string[] {
    return [...new Set(this.types().map((t) => t.group))].filter((g) => g !== '');
  }
}
