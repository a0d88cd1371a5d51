import type { ResourceType } from '../registry/resource-type';

/** Verbs of a stored type's collection and items, as upstream's discovery lists them. */
const STORED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];
/** The kind every scale sub-resource answers (kubectl scale's client reads it from discovery). */
const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/**
 * A sub-resource listed in discovery besides status (upstream lists each with its own kind):
 * pods/eviction is a policy/v1 Eviction that can only be created; kubectl drain evicts only
 * when discovery lists it, and deletes the pods otherwise.
 */
export interface SubresourceDoc {
  name: string;
  group: string;
  version: string;
  kind: string;
  verbs: readonly string[];
}

/**
 * Discovery documents that kubectl and client libraries read to map kinds to URLs:
 * - legacy (/api, /apis, /apis/{group}, /apis/{group}/{version}, /api/v1): one request per group
 *   version;
 * - aggregated (apidiscovery v2 and v2beta1, answered on /api and /apis to clients that ask for it
 *   in Accept; see aggregated-discovery.ts): every group, version and resource in one document
 *   each, so kubectl 1.30+ discovers everything in two requests.
 * Both are built from the same types, so they always list the same resources and verbs.
 */
export class Discovery {
  constructor(
    private readonly types: () => readonly ResourceType[],
    /** Virtual types (the review APIs) that can only be created. */
    private readonly createOnly: (t: ResourceType) => boolean = () => false,
    /**
     * Types listed under the second name of their group (svc.io, when the k8s.io name is served
     * too: GroupAliases.isSecondName). They are listed, so that clients map the kinds of manifests
     * written with that name to their paths (kubectl's RESTMapper reads every listed resource),
     * but without verbs, short names or categories: kubectl api-resources, `kubectl get all`,
     * completion and generic tools that walk every resource skip resources without verbs, so each
     * resource shows once, under its upstream name, as on an upstream cluster. The paths answer
     * every verb all the same.
     */
    private readonly secondName: (t: ResourceType) => boolean = () => false,
    /** Sub-resources with their own handler and kind, listed after status. */
    private readonly extraSubresources: (t: ResourceType) => readonly SubresourceDoc[] = () => [],
  ) {}

  versions(): Record<string, unknown> {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] };
  }

  groups(): Record<string, unknown> {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.groupNames().map((g) => this.group(g)!) };
  }

  group(name: string): Record<string, unknown> | undefined {
    const versions = this.versionsOf(name);
    if (versions.length === 0 || name === '') return undefined;
    const gv = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { kind: 'APIGroup', apiVersion: 'v1', name, versions: gv, preferredVersion: gv[0] };
  }

  resources(group: string, version: string): Record<string, unknown> | undefined {
    const ts = this.typesOf(group, version);
    if (ts.length === 0) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const t of ts) {
      resources.push({
        name: t.resource,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: this.verbs(t),
        ...this.names(t),
      });
      if (this.hasStatus(t)) {
        resources.push({ name: `${t.resource}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: this.statusVerbs(t) });
      }
      for (const sub of this.subresourceDocs(t)) {
        resources.push({ name: `${t.resource}/${sub.name}`, singularName: '', namespaced: t.namespaced, group: sub.group, version: sub.version, kind: sub.kind, verbs: [...sub.verbs] });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }

  /**
   * The aggregated document (upstream apidiscovery APIGroupDiscoveryList) of /api (legacy: the
   * core group only, one item with an empty name) or /apis (every other group, in the order of
   * the legacy /apis), in the group and version of the discovery API the client asked for
   * (apidiscovery.k8s.io/v2, its v2beta1, or the apidiscovery.svc.io twin).
   */
  aggregated(legacy: boolean, apiVersion: string): Record<string, unknown> {
    const names = legacy ? (this.versionsOf('').length > 0 ? [''] : []) : this.groupNames();
    const items = names.map((name) => ({
      metadata: { ...(name ? { name } : {}), creationTimestamp: null },
      versions: this.versionsOf(name).map((version) => ({
        version,
        resources: this.typesOf(name, version).map((t) => this.aggregatedResource(t)),
        freshness: 'Current',
      })),
    }));
    return { kind: 'APIGroupDiscoveryList', apiVersion, metadata: {}, items };
  }

  private aggregatedResource(t: ResourceType): Record<string, unknown> {
    const responseKind = { group: t.group, version: t.version, kind: t.kind };
    const subresources = [
      ...(this.hasStatus(t) ? [{ subresource: 'status', responseKind, verbs: this.statusVerbs(t) }] : []),
      ...this.subresourceDocs(t).map((s) => ({ subresource: s.name, responseKind: { group: s.group, version: s.version, kind: s.kind }, verbs: [...s.verbs] })),
    ];
    return {
      resource: t.resource,
      responseKind,
      scope: t.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: t.singular,
      verbs: this.verbs(t),
      ...this.names(t),
      ...(subresources.length > 0 ? { subresources } : {}),
    };
  }

  /** The sub-resources besides status: the scale of a type that declares one, and the server's extra ones (pods/eviction); without verbs under a group's second name. */
  private subresourceDocs(t: ResourceType): readonly SubresourceDoc[] {
    const extra = this.extraSubresources(t);
    const docs = t.scale ? [{ name: 'scale', ...SCALE_KIND, verbs: STATUS_VERBS }, ...extra] : extra;
    return this.secondName(t) ? docs.map((d) => ({ ...d, verbs: [] })) : docs;
  }

  private verbs(t: ResourceType): readonly string[] {
    if (this.secondName(t)) return [];
    if (t.servedVerbs) return t.servedVerbs;
    return this.createOnly(t) ? ['create'] : STORED_VERBS;
  }

  private statusVerbs(t: ResourceType): readonly string[] {
    return this.secondName(t) ? [] : STATUS_VERBS;
  }

  /** Short names and categories, for a type not listed under its group's second name. */
  private names(t: ResourceType): { shortNames?: readonly string[]; categories?: readonly string[] } {
    if (this.secondName(t)) return {};
    return { ...(t.shortNames?.length ? { shortNames: t.shortNames } : {}), ...(t.categories?.length ? { categories: t.categories } : {}) };
  }

  private hasStatus(t: ResourceType): boolean {
    return t.hasStatus && !this.createOnly(t);
  }

  private typesOf(group: string, version: string): ResourceType[] {
    return this.types().filter((t) => t.group === group && t.version === version);
  }

  /** A group's versions in registration order (the first is the preferred one). */
  private versionsOf(group: string): string[] {
    return [...new Set(this.types().filter((t) => t.group === group).map((t) => t.version))];
  }

  private groupNames(): string[] {
    return [...new Set(this.types().map((t) => t.group))].filter((g) => g !== '');
  }
}
