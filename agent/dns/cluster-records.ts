/**
 * The cluster's DNS data, kept from the Service and EndpointSlice informers: services by
 * namespace and name, each service's slices (by the kubernetes.io/service-name label), how many
 * services each namespace has (a namespace "exists" for NODATA answers while it has one; svc-node
 * does not watch Namespaces, CoreDNS does), and a reverse index (address -> names) for PTR
 * answers. Writes come from informer handlers, reads from the query path; both synchronous.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { canonicalIP, dashed } from './names';
import { SERVICE_NAME_LABEL, type Endpoint, type EndpointSlice, type Service } from './wire-types';

/** One endpoint of a service as DNS names it: its label under the service, and its addresses. */
export interface NamedEndpoint {
  /** The endpoint's hostname, else its dashed address (CoreDNS's endpointHostname). */
  label: string;
  addresses: string[];
}

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** True for a headless Service (clusterIP "None"): its name answers with endpoint addresses. */
export function isHeadless(svc: Service): boolean {
  return svc.spec?.clusterIP === 'None' && svc.spec?.type !== 'ExternalName';
}

/** The addresses of a ClusterIP Service (clusterIPs, else clusterIP), canonical; none for headless and ExternalName. */
export function clusterIPs(svc: Service): string[] {
  if (svc.spec?.type === 'ExternalName' || isHeadless(svc)) return [];
  const ips = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : svc.spec?.clusterIP ? [svc.spec.clusterIP] : [];
  return ips.filter((ip) => isIPv4(ip) || isIPv6(ip)).map(canonicalIP);
}

/**
 * Whether DNS publishes an endpoint: ready (an unset condition counts as ready, as discovery/v1
 * says), or any endpoint when the Service sets publishNotReadyAddresses.
 */
function published(ep: Endpoint, svc: Service | undefined): boolean {
  return svc?.spec?.publishNotReadyAddresses === true || ep.conditions?.ready !== false;
}

export class ClusterRecords {
  private readonly services = new Map<string, Service>();
  private readonly slices = new Map<string, EndpointSlice>();
  private readonly slicesOf = new Map<string, Set<string>>();
  private readonly perNamespace = new Map<string, number>();
  /** address -> source key -> names: sources are "svc:<ns>/<name>" and "eps:<ns>/<name>". */
  private readonly reverse = new Map<string, Map<string, string[]>>();
  /** source key -> the addresses it has entries under (so a change touches only those). */
  private readonly sourceIPs = new Map<string, string[]>();
  private modified: number;
  private changes = 0;

  /** now gives milliseconds since the epoch (the SOA serial is the last change's second, as CoreDNS's). */
  constructor(
    private readonly domain: string,
    private readonly now: () => number = Date.now,
  ) {
    this.modified = now();
  }

  /** The SOA serial: the Unix second of the last change. */
  serial(): number {
    return Math.floor(this.modified / 1000) >>> 0;
  }

  /** Counts changes: an answer computed at one generation is stale at another (the wire cache's check). */
  get generation(): number {
    return this.changes;
  }

  private touch(): void {
    this.modified = this.now();
    this.changes++;
  }

  upsertService(svc: Service): void {
    const key = keyOf(svc);
    const old = this.services.get(key);
    if (!old) this.perNamespace.set(svc.metadata.namespace ?? '', (this.perNamespace.get(svc.metadata.namespace ?? '') ?? 0) + 1);
    this.services.set(key, svc);
    const name = `${svc.metadata.name}.${svc.metadata.namespace}.svc.${this.domain}`;
    this.setReverse(`svc:${key}`, clusterIPs(svc).map((ip) => [ip, name]));
    // publishNotReadyAddresses changes which endpoints are published.
    for (const s of this.slicesOf.get(key) ?? []) this.indexSlice(this.slices.get(s)!);
    this.touch();
  }

  deleteService(svc: Service): void {
    const key = keyOf(svc);
    if (!this.services.delete(key)) return;
    const ns = svc.metadata.namespace ?? '';
    const left = (this.perNamespace.get(ns) ?? 1) - 1;
    if (left > 0) this.perNamespace.set(ns, left);
    else this.perNamespace.delete(ns);
    this.setReverse(`svc:${key}`, []);
    for (const s of this.slicesOf.get(key) ?? []) this.indexSlice(this.slices.get(s)!);
    this.touch();
  }

  upsertSlice(slice: EndpointSlice): void {
    const key = keyOf(slice);
    const old = this.slices.get(key);
    if (old) this.unlinkSlice(old);
    const svcKey = this.serviceKeyOf(slice);
    this.slices.set(key, slice);
    if (svcKey) {
      let set = this.slicesOf.get(svcKey);
      if (!set) this.slicesOf.set(svcKey, (set = new Set()));
      set.add(key);
    }
    this.indexSlice(slice);
    this.touch();
  }

  deleteSlice(slice: EndpointSlice): void {
    const key = keyOf(slice);
    const old = this.slices.get(key);
    if (!old) return;
    this.unlinkSlice(old);
    this.slices.delete(key);
    this.setReverse(`eps:${key}`, []);
    this.touch();
  }

  /** True while the namespace has a Service (its names exist: NODATA rather than NXDOMAIN). */
  hasNamespace(ns: string): boolean {
    return this.perNamespace.has(ns);
  }

  service(ns: string, name: string): Service | undefined {
    return this.services.get(`${ns}/${name}`);
  }

  /** The published endpoints of a Service (deduplicated by label), with the slices' ports. */
  endpoints(ns: string, name: string): { endpoints: NamedEndpoint[]; ports: { name: string; protocol: string; port: number }[] } {
    const svc = this.services.get(`${ns}/${name}`);
    const byLabel = new Map<string, Set<string>>();
    const ports = new Map<string, { name: string; protocol: string; port: number }>();
    for (const sk of this.slicesOf.get(`${ns}/${name}`) ?? []) {
      const slice = this.slices.get(sk)!;
      for (const ep of slice.endpoints ?? []) {
        if (!published(ep, svc) || ep.addresses.length === 0) continue;
        const label = (ep.hostname || dashed(ep.addresses[0])).toLowerCase();
        let set = byLabel.get(label);
        if (!set) byLabel.set(label, (set = new Set()));
        for (const a of ep.addresses) set.add(canonicalIP(a));
      }
      for (const p of slice.ports ?? []) {
        if (p.port === undefined) continue;
        const port = { name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port };
        ports.set(`${port.name}/${port.protocol}/${port.port}`, port);
      }
    }
    return { endpoints: [...byLabel].map(([label, a]) => ({ label, addresses: [...a] })), ports: [...ports.values()] };
  }

  /** The names whose PTR answers an address (canonical text), in a stable order. */
  namesOf(ip: string): string[] {
    const m = this.reverse.get(canonicalIP(ip));
    if (!m) return [];
    return [...new Set([...m.values()].flat())].sort();
  }

  private serviceKeyOf(slice: EndpointSlice): string | undefined {
    const svc = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    return svc ? `${slice.metadata.namespace ?? ''}/${svc}` : undefined;
  }

  private unlinkSlice(slice: EndpointSlice): void {
    const svcKey = this.serviceKeyOf(slice);
    if (!svcKey) return;
    const set = this.slicesOf.get(svcKey);
    set?.delete(keyOf(slice));
    if (set?.size === 0) this.slicesOf.delete(svcKey);
  }

  /** PTR entries of a slice's published endpoints: <label>.<service>.<ns>.svc.<domain> (CoreDNS answers endpoints of every service). */
  private indexSlice(slice: EndpointSlice): void {
    const svcName = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    const ns = slice.metadata.namespace ?? '';
    const svc = svcName ? this.services.get(`${ns}/${svcName}`) : undefined;
    const entries: [string, string][] = [];
    if (svcName) {
      for (const ep of slice.endpoints ?? []) {
        if (!published(ep, svc)) continue;
        for (const a of ep.addresses) {
          const label = (ep.hostname || dashed(a)).toLowerCase();
          entries.push([canonicalIP(a), `${label}.${svcName}.${ns}.svc.${this.domain}`]);
        }
      }
    }
    this.setReverse(`eps:${keyOf(slice)}`, entries);
  }

  private setReverse(source: string, entries: readonly [string, string][]): void {
    for (const ip of this.sourceIPs.get(source) ?? []) {
      const m = this.reverse.get(ip);
      if (m?.delete(source) && m.size === 0) this.reverse.delete(ip);
    }
    if (entries.length === 0) this.sourceIPs.delete(source);
    else this.sourceIPs.set(source, [...new Set(entries.map(([ip]) => ip))]);
    for (const [ip, name] of entries) {
      let m = this.reverse.get(ip);
      if (!m) this.reverse.set(ip, (m = new Map<string, string[]>()));
      const names = m.get(source) ?? [];
      if (!names.includes(name)) names.push(name);
      m.set(source, names);
    }
  }
}
