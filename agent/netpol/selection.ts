/**
 * NetworkPolicy semantics (networking v1, as upstream documents them), on plain views of the
 * objects: which pods a policy selects and isolates in which direction, and which peers one of
 * its rules names. Pure; nft-netpol.ts turns the result into rules.
 */
import { labelSelectorRequirements, selectorMatchesLabels } from '../../apiserver/api/label-selector';
import type { KObject } from '../../apiserver/api/types';
import { familyOf, parseCidr } from '../../common/cidr';

export type Direction = 'Ingress' | 'Egress';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** A pod as policies see it. */
export interface PodView {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  /** Its addresses (status.podIPs, else status.podIP); never empty. */
  ips: string[];
  nodeName: string;
  /** Container ports with a name, for named ports in policies. */
  namedPorts: { name: string; port: number; protocol: Protocol }[];
}

export interface PolicyPort {
  protocol: Protocol;
  /** A number, a port name, or undefined (every port of the protocol). */
  port?: number | string;
  endPort?: number;
}

/** A peer of a rule: every address, some pods, or an address block. */
export type Peer = { kind: 'any' } | { kind: 'pods'; pods: PodView[] } | { kind: 'block'; cidr: string; except: string[] };

/** One ingress or egress rule with its peers resolved. */
export interface ResolvedRule {
  policy: string;
  peers: Peer[];
  /** Empty: every port and protocol. */
  ports: PolicyPort[];
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strMap = (v: unknown): Record<string, string> => Object.fromEntries(Object.entries(rec(v)).filter(([, x]) => typeof x === 'string')) as Record<string, string>;
/** A string field, '' when absent or not a string. */
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const protocolOf = (v: unknown): Protocol => (v === 'UDP' || v === 'SCTP' ? v : 'TCP');

/**
 * The pod's view, or undefined for a pod policies do not apply to: no address yet, finished
 * (Succeeded/Failed: its address may be reused), or on the host's network (upstream leaves
 * host-network pods outside NetworkPolicy; most plugins, as this one, ignore them).
 */
export function podViewOf(o: KObject): PodView | undefined {
  const spec = rec(o.spec);
  const status = rec(o.status);
  if (spec.hostNetwork === true || status.phase === 'Succeeded' || status.phase === 'Failed') return undefined;
  // Only well-formed addresses: one bad string would make nft refuse the whole table.
  const ips = arr(status.podIPs).map((p) => rec(p).ip).filter((ip): ip is string => typeof ip === 'string' && familyOf(ip) !== undefined);
  if (ips.length === 0 && typeof status.podIP === 'string' && familyOf(status.podIP) !== undefined) ips.push(status.podIP);
  if (ips.length === 0) return undefined;
  const namedPorts: PodView['namedPorts'] = [];
  for (const c of arr(spec.containers)) {
    for (const p of arr(rec(c).ports)) {
      const r = rec(p);
      if (typeof r.name === 'string' && r.name !== '' && typeof r.containerPort === 'number') namedPorts.push({ name: r.name, port: r.containerPort, protocol: protocolOf(r.protocol) });
    }
  }
  const meta = rec(o.metadata);
  return { namespace: text(meta.namespace), name: text(meta.name), labels: strMap(meta.labels), ips, nodeName: text(spec.nodeName), namedPorts };
}

/**
 * Namespace name → labels, with `kubernetes.io/metadata.name` set as upstream's API server sets
 * it on every namespace (so selectors on it work even where the label was not stored).
 */
export function namespaceLabels(namespaces: readonly KObject[]): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const n of namespaces) {
    const meta = rec(n.metadata);
    const name = text(meta.name);
    out.set(name, { ...strMap(meta.labels), 'kubernetes.io/metadata.name': name });
  }
  return out;
}

/** Upstream's defaulting: policyTypes as given, else Ingress, plus Egress when the policy has egress rules. */
export function policyTypesOf(policy: KObject): Direction[] {
  const spec = rec(policy.spec);
  const given = arr(spec.policyTypes).filter((t): t is Direction => t === 'Ingress' || t === 'Egress');
  if (given.length > 0) return given;
  return arr(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
}

const nsOf = (o: KObject) => text(rec(o.metadata).namespace);
const nameOf = (o: KObject) => `${nsOf(o)}/${text(rec(o.metadata).name)}`;

/** Whether the policy selects the pod (same namespace, podSelector matches; an empty selector selects all). */
export function selects(policy: KObject, pod: PodView): boolean {
  return nsOf(policy) === pod.namespace && selectorMatchesLabels(labelSelectorRequirements(rec(policy.spec).podSelector ?? {}), pod.labels);
}

/**
 * A peer's pods: podSelector alone → pods of the policy's namespace; namespaceSelector alone →
 * every pod of the selected namespaces; both → the pods podSelector selects in those namespaces.
 * A namespace the cache does not know has only its name label.
 */
function peerOf(raw: unknown, policyNs: string, pods: readonly PodView[], ns: Map<string, Record<string, string>>): Peer | undefined {
  const p = rec(raw);
  const block = rec(p.ipBlock);
  if (typeof block.cidr === 'string') {
    // Canonical blocks (host bits cleared). A block that does not parse (validation refuses it) allows nothing rather than making nft refuse the whole table.
    try {
      return { kind: 'block', cidr: parseCidr(block.cidr).text, except: arr(block.except).map((e) => parseCidr(String(e)).text) };
    } catch {
      return undefined;
    }
  }
  if (p.podSelector === undefined && p.namespaceSelector === undefined) return undefined; // validation refuses an empty peer
  const podReqs = labelSelectorRequirements(p.podSelector ?? {});
  const nsReqs = p.namespaceSelector === undefined ? undefined : labelSelectorRequirements(p.namespaceSelector);
  const inNamespace = (pod: PodView) =>
    nsReqs === undefined ? pod.namespace === policyNs : selectorMatchesLabels(nsReqs, ns.get(pod.namespace) ?? { 'kubernetes.io/metadata.name': pod.namespace });
  return { kind: 'pods', pods: pods.filter((pod) => inNamespace(pod) && selectorMatchesLabels(podReqs, pod.labels)) };
}

function portsOf(raw: unknown): PolicyPort[] {
  return arr(raw).map((x) => {
    const r = rec(x);
    const port = typeof r.port === 'number' || typeof r.port === 'string' ? r.port : undefined;
    return { protocol: protocolOf(r.protocol), ...(port === undefined ? {} : { port }), ...(typeof r.endPort === 'number' ? { endPort: r.endPort } : {}) };
  });
}

/**
 * The rules that apply to `pod` in `dir`, or undefined when no policy isolates it in that
 * direction (then everything is allowed, as upstream). An isolated pod with no rules (a
 * default-deny policy) answers []. Policies are additive: a connection is allowed when any rule
 * of any selecting policy allows it. Rules are in policy name order, then rule order.
 */
export function rulesFor(pod: PodView, dir: Direction, policies: readonly KObject[], pods: readonly PodView[], ns: Map<string, Record<string, string>>): ResolvedRule[] | undefined {
  const applying = policies.filter((p) => selects(p, pod) && policyTypesOf(p).includes(dir)).sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  if (applying.length === 0) return undefined;
  const out: ResolvedRule[] = [];
  for (const policy of applying) {
    const spec = rec(policy.spec);
    for (const rule of arr(dir === 'Ingress' ? spec.ingress : spec.egress)) {
      const r = rec(rule);
      const rawPeers = arr(dir === 'Ingress' ? r.from : r.to);
      // An empty or absent peer list allows every peer.
      const peers = rawPeers.length === 0 ? [{ kind: 'any' } as Peer] : rawPeers.map((p) => peerOf(p, nsOf(policy), pods, ns)).filter((p): p is Peer => p !== undefined);
      out.push({ policy: nameOf(policy), peers, ports: portsOf(r.ports) });
    }
  }
  return out;
}
