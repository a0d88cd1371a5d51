/**
 * What the proxy programs, read from the API objects: one ServicePortInfo per port of every
 * Service that has a cluster IP, with the endpoints its EndpointSlices give for that port
 * (upstream kube-proxy's ServicePort and Endpoint, pkg/proxy/serviceport.go and endpoint.go).
 *
 * As upstream: ExternalName and headless Services get no rules; a slice belongs to the Service
 * named by its kubernetes.io/service-name label in its namespace; FQDN slices are ignored; an
 * endpoint contributes its first address; unset conditions read as upstream's (ready nil is
 * ready, serving nil follows ready, terminating nil is false); an endpoint is local when its
 * nodeName is this node's name.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { KObject } from '../../apiserver/api/types';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
/** The label tying an EndpointSlice to its Service (upstream's discovery.LabelServiceName). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface EndpointInfo {
  ip: string;
  port: number;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** On this node (the endpoint's nodeName is the node's name). */
  local: boolean;
}

export interface ServicePortInfo {
  namespace: string;
  name: string;
  /** The port's name ('' for a Service's single unnamed port). */
  portName: string;
  protocol: Protocol;
  port: number;
  /** The cluster IPs (one per family). */
  clusterIPs: string[];
  /** 0 when the Service has no node port for this port. */
  nodePort: number;
  /** spec.externalIPs and status.loadBalancer.ingress[].ip: reached as the node ports are. */
  externalIPs: string[];
  /** sessionAffinity ClientIP's timeout in seconds; 0 without affinity. */
  affinityTimeoutSeconds: number;
  /** internalTrafficPolicy Local: cluster traffic goes to this node's endpoints only. */
  internalLocal: boolean;
  /** externalTrafficPolicy Local on a NodePort/LoadBalancer Service: external traffic to local endpoints only, source kept. */
  externalLocal: boolean;
  endpoints: EndpointInfo[];
}

/** Upstream's default sessionAffinityConfig.clientIP.timeoutSeconds (3 hours). */
export const DEFAULT_AFFINITY_TIMEOUT_SECONDS = 10800;

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const isIP = (s: string): boolean => isIPv4(s) || isIPv6(s);

function protocolOf(v: unknown): Protocol | undefined {
  const p = v === undefined || v === null || v === '' ? 'TCP' : v;
  return PROTOCOLS.includes(p as Protocol) ? (p as Protocol) : undefined;
}

/** The slices of each Service, keyed "namespace/name". */
export function slicesByService(slices: readonly KObject[]): Map<string, KObject[]> {
  const out = new Map<string, KObject[]>();
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!svc || str((s as Rec).addressType) === 'FQDN') continue;
    const key = `${s.metadata.namespace ?? ''}/${svc}`;
    const list = out.get(key);
    if (list) list.push(s);
    else out.set(key, [s]);
  }
  return out;
}

/** The cluster IPs of a Service (clusterIPs, else clusterIP), none for headless or ExternalName. */
function clusterIPsOf(spec: Rec): string[] {
  if (str(spec.type) === 'ExternalName') return [];
  const ips = arr(spec.clusterIPs).map(str);
  const all = ips.length > 0 ? ips : [str(spec.clusterIP)];
  return all.filter(isIP);
}

/** The endpoints of one Service port from the Service's slices, de-duplicated by address and port. */
function endpointsFor(slices: readonly KObject[], portName: string, protocol: Protocol, nodeName: string): EndpointInfo[] {
  const seen = new Map<string, EndpointInfo>();
  for (const slice of slices) {
    const sp = arr((slice as Rec).ports).map(rec).find((p) => str(p.name) === portName && protocolOf(p.protocol) === protocol);
    const port = sp ? num(sp.port) : 0;
    if (port <= 0 || port > 65535) continue;
    for (const ep of arr((slice as Rec).endpoints).map(rec)) {
      const ip = str(arr(ep.addresses)[0]);
      if (!isIP(ip)) continue;
      const c = rec(ep.conditions);
      const ready = c.ready === undefined || c.ready === null ? true : c.ready === true;
      const serving = c.serving === undefined || c.serving === null ? ready : c.serving === true;
      const terminating = c.terminating === true;
      const key = `${ip}/${port}`;
      if (!seen.has(key)) seen.set(key, { ip, port, ready, serving, terminating, local: nodeName !== '' && str(ep.nodeName) === nodeName });
    }
  }
  return [...seen.values()].sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
}

/**
 * Remembers each Service's ports by the identity of the Service object and of its slices (an
 * informer hands out a new object for every change), so a sync reads again only the Services
 * whose objects changed, and unchanged ports keep their identity (FragmentCache keys on it).
 * Keeps what the last call used, nothing older.
 */
export class PortsMemo {
  private prev = new Map<KObject, { slices: readonly KObject[]; nodeName: string; ports: ServicePortInfo[] }>();
  private next = new Map<KObject, { slices: readonly KObject[]; nodeName: string; ports: ServicePortInfo[] }>();

  portsOf(svc: KObject, slices: readonly KObject[], nodeName: string, read: () => ServicePortInfo[]): ServicePortInfo[] {
    const hit = this.prev.get(svc);
    const same = hit && hit.nodeName === nodeName && hit.slices.length === slices.length && hit.slices.every((s, i) => s === slices[i]);
    const entry = same ? hit : { slices, nodeName, ports: read() };
    this.next.set(svc, entry);
    return entry.ports;
  }

  endCall(): void {
    this.prev = this.next;
    this.next = new Map();
  }
}

/** One entry per port of every Service with a cluster IP, in a stable order (namespace, name, port name, protocol). */
export function servicePortsOf(services: readonly KObject[], slices: readonly KObject[], nodeName: string, memo?: PortsMemo): ServicePortInfo[] {
  const bySvc = slicesByService(slices);
  const keyed: { key: string; ports: ServicePortInfo[] }[] = [];
  for (const svc of services) {
    const slicesOf = bySvc.get(`${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`) ?? [];
    const ports = memo ? memo.portsOf(svc, slicesOf, nodeName, () => portsOfService(svc, slicesOf, nodeName)) : portsOfService(svc, slicesOf, nodeName);
    if (ports.length > 0) keyed.push({ key: `${svc.metadata.namespace ?? ''}\u0000${svc.metadata.name ?? ''}`, ports });
  }
  memo?.endCall();
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.flatMap((k) => k.ports);
}

/** The ports of one Service (none without a cluster IP), sorted by port name and protocol. */
function portsOfService(svc: KObject, slicesOf: readonly KObject[], nodeName: string): ServicePortInfo[] {
  const out: ServicePortInfo[] = [];
  const spec = rec((svc as Rec).spec);
  const clusterIPs = clusterIPsOf(spec);
  if (clusterIPs.length === 0) return out;
  const namespace = svc.metadata.namespace ?? '';
  const name = svc.metadata.name ?? '';
  const type = str(spec.type) || 'ClusterIP';
  const externallyReachable = type === 'NodePort' || type === 'LoadBalancer';
  const affinity = str(spec.sessionAffinity) === 'ClientIP';
  const timeout = num(rec(rec(spec.sessionAffinityConfig).clientIP).timeoutSeconds) || DEFAULT_AFFINITY_TIMEOUT_SECONDS;
  const lbIPs = arr(rec(rec((svc as Rec).status).loadBalancer).ingress).map((i) => str(rec(i).ip));
  const externalIPs = [...arr(spec.externalIPs).map(str), ...(type === 'LoadBalancer' ? lbIPs : [])].filter(isIP);
  for (const p of arr(spec.ports).map(rec)) {
    const protocol = protocolOf(p.protocol);
    const port = num(p.port);
    if (!protocol || port <= 0 || port > 65535) continue;
    const portName = str(p.name);
    out.push({
      namespace,
      name,
      portName,
      protocol,
      port,
      clusterIPs,
      nodePort: externallyReachable ? num(p.nodePort) : 0,
      externalIPs,
      affinityTimeoutSeconds: affinity ? timeout : 0,
      internalLocal: str(spec.internalTrafficPolicy) === 'Local',
      externalLocal: externallyReachable && (str(spec.externalTrafficPolicy) === 'Local' || str(spec.externalTrafficPolicy) === 'OnlyLocal'),
      endpoints: endpointsFor(slicesOf, portName, protocol, nodeName),
    });
  }
  const key = (s: ServicePortInfo) => `${s.portName}\u0000${s.protocol}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * Upstream's CategorizeEndpoints: the endpoints cluster traffic and external traffic use. Ready
 * endpoints, else (none ready) the serving-and-terminating ones; a Local policy keeps this node's
 * endpoints only, with the same fallback among them.
 */
export function usableEndpoints(sp: ServicePortInfo, localOnly: boolean): EndpointInfo[] {
  const pool = localOnly ? sp.endpoints.filter((e) => e.local) : sp.endpoints;
  const ready = pool.filter((e) => e.ready);
  return ready.length > 0 ? ready : pool.filter((e) => e.serving && e.terminating);
}
