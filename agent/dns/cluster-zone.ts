/**
 * Answers for names in the cluster domain and for reverse names of cluster addresses, following
 * the Kubernetes DNS-Based Service Discovery specification as CoreDNS's kubernetes plugin serves
 * it (read for facts, not code):
 * - <svc>.<ns>.svc.<domain>: A/AAAA of the ClusterIPs; for a headless Service the published
 *   endpoints' addresses (NXDOMAIN while it has none, as CoreDNS); CNAME for ExternalName.
 * - _<port>._<proto>.<svc>.<ns>.svc.<domain>: SRV per named port (headless: one per endpoint,
 *   target <hostname or dashed address>.<svc>...; ClusterIP: target the service name), with the
 *   targets' addresses as additional records; SRV on the service name lists every named port.
 * - <hostname>.<svc>.<ns>.svc.<domain>: an endpoint of a headless Service (pods with
 *   spec.hostname and spec.subdomain), and its dashed-address name.
 * - <a-b-c-d>.<ns>.pod.<domain> as CoreDNS's `pods` option (dns.pods): "insecure" (the default,
 *   as in kubeadm's and k3s's Corefile) answers the address spelled in the name, unchecked;
 *   "verified" only when a pod in <ns> has that address (pod-ips.ts), else NXDOMAIN; "disabled"
 *   (the plugin's own default without a `pods` line) NXDOMAIN for every such name.
 * - dns-version.<domain> TXT "1.1.0" (the specification's version record).
 * - PTR for ClusterIPs (-> service name) and published endpoint addresses (-> endpoint name).
 * NXDOMAIN when no record of any type exists under the name, NOERROR with no answers (NODATA)
 * when the name exists with other types; both carry the zone's SOA in the authority section.
 * TTL 5 s for every record, CoreDNS's default (its SOA: refresh 7200, retry 1800, expire 86400,
 * minimum = the TTL, serial = the last change's Unix second).
 */
import type { Answer } from 'dns-packet';
import { isIPv4, isIPv6 } from 'node:net';
import { clusterIPs, isHeadless, type ClusterRecords } from './cluster-records';
import { addressOfReverse, canonical, canonicalIP, inZone } from './names';

export const CLUSTER_TTL = 5;
export const DNS_SCHEMA_VERSION = '1.1.0';

export interface ZoneAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  answers: Answer[];
  additionals: Answer[];
  /** The zone whose SOA goes in the authority section of a negative answer. */
  zone: string;
  /** An ExternalName's target the server still has to resolve (qtype other than CNAME). */
  chase?: string;
}

type Rec = { answers: Answer[]; additionals?: Answer[]; chase?: string };

/** CoreDNS's kubernetes plugin POD-MODE. */
export type PodMode = 'disabled' | 'insecure' | 'verified';

/** How pod names are answered; `exists` (the pods' addresses) is read in "verified" mode only. */
export interface PodAnswers {
  mode: PodMode;
  /** Whether a pod of the namespace has the address (canonical). */
  exists?(ip: string, namespace: string): boolean;
  /** Changes whenever exists() may answer differently (part of the zone's generation). */
  readonly generation?: number;
}
const INSECURE: PodAnswers = { mode: 'insecure' };
const NXDOMAIN = null;

export class ClusterZone {
  constructor(
    private readonly records: ClusterRecords,
    /** The cluster domain, canonical (e.g. "cluster.local"). */
    readonly domain: string,
    private readonly ttl = CLUSTER_TTL,
    private readonly pods: PodAnswers = INSECURE,
  ) {}

  /** The records' generation (changes with every Service or EndpointSlice change, and every pod address change when verified). */
  get generation(): number {
    return this.records.generation + (this.pods.generation ?? 0);
  }

  /** The SOA record of a zone this server answers for (the cluster domain or a reverse zone). */
  soa(zone: string): Answer {
    const apex = zone === this.domain ? this.domain : zone;
    return {
      type: 'SOA',
      name: apex,
      ttl: this.ttl,
      class: 'IN',
      data: { mname: `ns.dns.${this.domain}`, rname: `hostmaster.${this.domain}`, serial: this.records.serial(), refresh: 7200, retry: 1800, expire: 86400, minimum: this.ttl },
    };
  }

  /**
   * The answer for a query, or undefined when the name is not this server's to answer: outside
   * the cluster domain, or a reverse name of an address the cluster does not know (forwarded, as
   * CoreDNS's "fallthrough in-addr.arpa ip6.arpa").
   */
  answer(qname: string, qtype: string): ZoneAnswer | undefined {
    const name = canonical(qname);
    if (inZone(name, this.domain)) return this.finish(this.domain, this.inCluster(name, qtype));
    const ip = addressOfReverse(name);
    if (ip === undefined) return undefined;
    const names = this.records.namesOf(ip);
    if (names.length === 0) return undefined;
    const zone = name.endsWith('.in-addr.arpa') ? 'in-addr.arpa' : 'ip6.arpa';
    const answers = qtype === 'PTR' ? names.map((n) => this.rr('PTR', name, n)) : [];
    return this.finish(zone, { answers });
  }

  private finish(zone: string, rec: Rec | null): ZoneAnswer {
    if (rec === NXDOMAIN) return { rcode: 'NXDOMAIN', answers: [], additionals: [], zone };
    return { rcode: 'NOERROR', answers: rec.answers, additionals: rec.additionals ?? [], zone, ...(rec.chase ? { chase: rec.chase } : {}) };
  }

  private rr(type: Answer['type'], name: string, data: unknown): Answer {
    return { type, name, ttl: this.ttl, class: 'IN', data } as Answer;
  }

  private address(name: string, ip: string): Answer {
    return isIPv4(ip) ? this.rr('A', name, ip) : this.rr('AAAA', name, ip);
  }

  /** Address records of a set of addresses, those of the query's family only. */
  private addresses(name: string, ips: readonly string[], qtype: string): Answer[] {
    const want = qtype === 'A' ? isIPv4 : qtype === 'AAAA' ? isIPv6 : () => false;
    return ips.filter((ip) => want(ip)).map((ip) => this.address(name, ip));
  }

  private inCluster(name: string, qtype: string): Rec | null {
    const rel = name === this.domain ? '' : name.slice(0, -(this.domain.length + 1));
    const l = rel === '' ? [] : rel.split('.');
    const n = l.length;
    if (n === 0) return { answers: qtype === 'SOA' ? [this.soa(this.domain)] : [] };
    if (n === 1 && l[0] === 'dns-version') return { answers: qtype === 'TXT' ? [this.rr('TXT', name, DNS_SCHEMA_VERSION)] : [] };
    const kind = l[n - 1];
    if (kind !== 'svc' && kind !== 'pod') return NXDOMAIN;
    if (n === 1) return { answers: [] };
    const ns = l[n - 2];
    if (n === 2) return this.records.hasNamespace(ns) ? { answers: [] } : NXDOMAIN;
    if (kind === 'pod') return n === 3 ? this.pod(name, ns, l[0], qtype) : NXDOMAIN;
    const svc = this.records.service(ns, l[n - 3]);
    if (!svc) return NXDOMAIN;
    if (n === 3) return this.service(name, ns, l[0], qtype);
    if (n === 4 && l[0].startsWith('_')) return this.hasProtocol(ns, l[1], l[0].slice(1)) ? { answers: [] } : NXDOMAIN;
    if (n === 4) return this.endpoint(name, ns, l[1], l[0], qtype);
    if (n === 5 && l[0].startsWith('_') && l[1].startsWith('_')) return this.srv(name, ns, l[2], l[0].slice(1), l[1].slice(1), qtype);
    return NXDOMAIN;
  }

  /** <a-b-c-d>.<ns>.pod.<domain>: the address spelled in the first label (checked against the pods when verified). */
  private pod(name: string, ns: string, label: string, qtype: string): Rec | null {
    if (this.pods.mode === 'disabled') return NXDOMAIN;
    const v4 = label.replace(/-/g, '.');
    const v6 = label.replace(/-/g, ':');
    const ip = isIPv4(v4) ? v4 : isIPv6(v6) ? canonicalIP(v6) : undefined;
    if (!ip) return NXDOMAIN;
    if (this.pods.mode === 'verified' && !this.pods.exists?.(ip, ns)) return NXDOMAIN;
    return { answers: this.addresses(name, [ip], qtype) };
  }

  private service(name: string, ns: string, svcName: string, qtype: string): Rec | null {
    const svc = this.records.service(ns, svcName)!;
    if (svc.spec?.type === 'ExternalName') {
      const target = canonical(svc.spec.externalName ?? '');
      if (!target) return NXDOMAIN;
      return { answers: [this.rr('CNAME', name, target)], ...(qtype !== 'CNAME' ? { chase: target } : {}) };
    }
    if (isHeadless(svc)) {
      const { endpoints } = this.records.endpoints(ns, svcName);
      if (endpoints.length === 0) return NXDOMAIN;
      if (qtype === 'SRV') return this.srvAll(name, ns, svcName, undefined, undefined);
      return { answers: this.addresses(name, endpoints.flatMap((e) => e.addresses), qtype) };
    }
    if (qtype === 'SRV') return this.srvAll(name, ns, svcName, undefined, undefined);
    return { answers: this.addresses(name, clusterIPs(svc), qtype) };
  }

  private endpoint(name: string, ns: string, svcName: string, label: string, qtype: string): Rec | null {
    const svc = this.records.service(ns, svcName)!;
    if (!isHeadless(svc)) return NXDOMAIN;
    const ep = this.records.endpoints(ns, svcName).endpoints.find((e) => e.label === label);
    if (!ep) return NXDOMAIN;
    return { answers: this.addresses(name, ep.addresses, qtype) };
  }

  private hasProtocol(ns: string, svcName: string, proto: string): boolean {
    const svc = this.records.service(ns, svcName)!;
    return (svc.spec?.ports ?? []).some((p) => p.name && (p.protocol ?? 'TCP').toLowerCase() === proto);
  }

  private srv(name: string, ns: string, svcName: string, port: string, proto: string, qtype: string): Rec | null {
    const rec = this.srvAll(name, ns, svcName, port, proto);
    if (rec === NXDOMAIN || qtype === 'SRV') return rec;
    return { answers: [] };
  }

  /** SRV records of the Service's named ports (one port and protocol, or all), NXDOMAIN when none match. */
  private srvAll(name: string, ns: string, svcName: string, portName: string | undefined, proto: string | undefined): Rec | null {
    const svc = this.records.service(ns, svcName)!;
    const svcFqdn = `${svcName}.${ns}.svc.${this.domain}`;
    const match = (p: { name?: string; protocol?: string }) =>
      !!p.name && (portName === undefined || p.name.toLowerCase() === portName) && (proto === undefined || (p.protocol ?? 'TCP').toLowerCase() === proto);
    const answers: Answer[] = [];
    const additionals: Answer[] = [];
    if (isHeadless(svc)) {
      const { endpoints, ports } = this.records.endpoints(ns, svcName);
      const named = ports.filter(match);
      const weight = Math.max(1, Math.floor(100 / Math.max(1, endpoints.length)));
      for (const p of named) {
        for (const ep of endpoints) {
          const target = `${ep.label}.${svcFqdn}`;
          answers.push(this.rr('SRV', name, { priority: 0, weight, port: p.port, target }));
          for (const ip of ep.addresses) additionals.push(this.address(target, ip));
        }
      }
    } else {
      const named = (svc.spec?.ports ?? []).filter(match);
      for (const p of named) answers.push(this.rr('SRV', name, { priority: 0, weight: 100, port: p.port, target: svcFqdn }));
      if (named.length > 0) for (const ip of clusterIPs(svc)) additionals.push(this.address(svcFqdn, ip));
    }
    if (answers.length === 0) return portName === undefined ? { answers: [] } : NXDOMAIN;
    return { answers, additionals: dedupe(additionals) };
  }
}

function dedupe(rrs: Answer[]): Answer[] {
  const seen = new Set<string>();
  return rrs.filter((r) => {
    const k = `${r.name}/${r.type}/${JSON.stringify((r as { data?: unknown }).data)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
