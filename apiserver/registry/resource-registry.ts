import type { ResourceType } from './resource-type';

/** One API group as discovery lists it (APIGroup: name, versions, preferredVersion). */
export interface ApiGroupInfo {
  name: string; // '' for the core group
  versions: string[]; // highest priority first
  preferredVersion: string;
}

/**
 * Discovery order of upstream's aggregator (apiVersionPriorities): core first, then these groups;
 * groups not listed follow, by name.
 */
const GROUP_PRIORITY: readonly string[] = [
  '',
  'apps',
  'events.svc.io',
  'authentication.svc.io',
  'authorization.svc.io',
  'autoscaling',
  'batch',
  'certificates.svc.io',
  'networking.svc.io',
  'policy',
  'rbac.authorization.svc.io',
  'storage.svc.io',
  'admissionregistration.svc.io',
  'apiextensions.svc.io',
  'scheduling.svc.io',
  'coordination.svc.io',
  'node.svc.io',
  'discovery.svc.io',
  'flowcontrol.apiserver.svc.io',
  'resource.svc.io',
];

/**
 * Upstream version.CompareKubeAwareVersionStrings as a sort key: GA before beta before alpha,
 * higher major then higher minor first, non-conforming names last and alphabetical.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) {
    if (pa) return -1;
    if (pb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (pa.stability !== pb.stability) return pb.stability - pa.stability;
  if (pa.major !== pb.major) return pb.major - pa.major;
  return pb.minor - pa.minor;
}

function parseVersion(v: string): { major: number; stability: number; minor: number } | undefined {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return undefined;
  return { major: Number(m[1]), stability: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor: Number(m[3] ?? 0) };
}

function groupRank(g: string): number {
  const i = GROUP_PRIORITY.indexOf(g);
  return i < 0 ? GROUP_PRIORITY.length : i;
}

/** Told of each type added to or removed from a registry (custom resources come and go at run time). */
export interface RegistryListener {
  added?(t: ResourceType): void;
  removed?(t: ResourceType): void;
}

/**
 * group/version/resource -> ResourceType, filled explicitly at startup (no import side effects)
 * with the built-in types, then changed at run time as CustomResourceDefinitions are established
 * and removed (controllers/crd-controller.ts): every reader asks it per request, and listeners
 * (the garbage collector) are told of each change.
 */
export class ResourceRegistry {
  private types: ResourceType[] = [];
  private readonly byResource = new Map<string, ResourceType>();
  private readonly byKindKey = new Map<string, ResourceType>();
  /** Types kept for the server's own use but not served (--runtime-config turned their version off). */
  private readonly unserved = new Set<ResourceType>();
  private readonly listeners = new Set<RegistryListener>();

  /** Adds a type; throws if its group/version/resource (or group/version/kind) is already registered. */
  register(t: ResourceType): void {
    const rk = `${t.group}/${t.version}/${t.resource}`;
    const kk = `${t.group}/${t.version}/${t.kind}`;
    if (this.byResource.has(rk)) throw new Error(`resource ${rk} registered twice`);
    if (this.byKindKey.has(kk)) throw new Error(`kind ${kk} registered twice`);
    this.types.push(t);
    this.byResource.set(rk, t);
    this.byKindKey.set(kk, t);
    for (const l of this.listeners) l.added?.(t);
  }

  /** Removes the type served at group/version/resource (a no-op when absent); returns what it removed. */
  unregister(group: string, version: string, resource: string): ResourceType | undefined {
    const t = this.byResource.get(`${group}/${version}/${resource}`);
    if (!t) return undefined;
    this.byResource.delete(`${group}/${version}/${resource}`);
    this.byKindKey.delete(`${group}/${version}/${t.kind}`);
    this.types = this.types.filter((x) => x !== t);
    this.unserved.delete(t);
    for (const l of this.listeners) l.removed?.(t);
    return t;
  }

  /** Replaces the type at t's group/version/resource (or adds it): a CRD update changed its schema, columns or names. */
  replace(t: ResourceType): void {
    this.unregister(t.group, t.version, t.resource);
    this.register(t);
  }

  /** Tells listener of every later change until the signal aborts. */
  subscribe(listener: RegistryListener, signal?: AbortSignal): void {
    this.listeners.add(listener);
    signal?.addEventListener('abort', () => this.listeners.delete(listener), { once: true });
  }

  /** The type served at group/version/resource, or undefined. */
  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`);
  }

  /** The type of group/version/kind, or undefined. */
  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.byKindKey.get(`${group}/${version}/${kind}`);
  }

  /** Every type of one group/version, in registration order. */
  resources(group: string, version: string): ResourceType[] {
    return this.types.filter((t) => t.group === group && t.version === version);
  }

  /** Groups in discovery order, each with its versions (preferred first). */
  groups(): ApiGroupInfo[] {
    const versions = new Map<string, Set<string>>();
    for (const t of this.types) {
      const set = versions.get(t.group) ?? new Set<string>();
      set.add(t.version);
      versions.set(t.group, set);
    }
    return [...versions.entries()]
      .sort(([a], [b]) => groupRank(a) - groupRank(b) || (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, set]) => {
        const vs = [...set].sort(compareVersions);
        return { name, versions: vs, preferredVersion: vs[0] };
      });
  }

  /** Every registered type, in registration order (served or not: the control loops use them all). */
  all(): readonly ResourceType[] {
    return this.types;
  }

  /** Stops serving a type: not found over HTTP, absent from discovery and OpenAPI (--runtime-config). */
  stopServing(t: ResourceType): void {
    this.unserved.add(t);
  }

  isServed(t: ResourceType): boolean {
    return !this.unserved.has(t);
  }

  /** The types served over HTTP, in registration order. */
  served(): readonly ResourceType[] {
    return this.unserved.size ? this.types.filter((t) => !this.unserved.has(t)) : this.types;
  }
}
