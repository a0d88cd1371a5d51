/**
 * NetworkPolicies → our nftables table (`inet svc-netpol`), a pure function. Layout:
 *
 * - base chain `forward` (filter hook forward, priority 0, policy accept): replies and related
 *   packets of allowed connections are accepted first (`ct state established,related`); then the
 *   source address jumps, through a verdict map, to the egress chain of an egress-isolated pod of
 *   this node, then the destination address to the ingress chain of an ingress-isolated pod.
 *   A pod no policy isolates has no entry: everything is allowed (upstream's default). The
 *   node's own traffic to its pods leaves through the output hook, not forward: always allowed,
 *   as upstream allows ingress from the pod's node.
 * - per pod and direction, `ingress-<ip>` / `egress-<ip>` (keyed by the pod's first address;
 *   every address of the pod maps to it): one rule per allowed (peer, port) pair that `return`s
 *   (so the other direction's check still runs), then `drop` (upstream: isolated and not allowed
 *   by any policy is denied). A default-deny policy leaves only the `drop`.
 *
 * Named ports resolve per pod as upstream: for ingress in the selected pod's container ports
 * (name and protocol), for egress in each destination pod's; an ipBlock or "any" destination
 * cannot name a port (no pod to resolve it in; "any" resolves in every known pod). A name that
 * resolves nowhere allows nothing.
 */
import type { KObject } from '../../apiserver/api/types';
import { namespaceLabels, podViewOf, rulesFor, type Direction, type Peer, type PodView, type PolicyPort, type ResolvedRule } from './selection';

export const NETPOL_TABLE = 'svc-netpol';

export interface NetpolChain {
  base?: string;
  rules: string[];
}

/** Chains by name, in declaration order. */
export type NetpolTable = Map<string, NetpolChain>;

export interface NetpolInput {
  policies: readonly KObject[];
  /** Every pod of the cluster (peers may run on other nodes). */
  pods: readonly KObject[];
  namespaces: readonly KObject[];
  /** Policies are enforced for the pods bound to this node. */
  nodeName: string;
}

const fam = (ip: string) => (ip.includes(':') ? 'ip6' : 'ip');
/** The peer's address field (the source of ingress traffic, the destination of egress). */
const field = (dir: Direction) => (dir === 'Ingress' ? 'saddr' : 'daddr');
/** The selected pod's own address field. */
const own = (dir: Direction) => (dir === 'Ingress' ? 'daddr' : 'saddr');
const setOf = (items: readonly string[]) => (items.length === 1 ? items[0] : `{ ${items.join(', ')} }`);

/** Address matches for a set of addresses, one per family present. */
function addrMatches(ips: Iterable<string>, f: string): string[] {
  const by = new Map<string, Set<string>>();
  for (const ip of ips) {
    const k = fam(ip);
    if (!by.has(k)) by.set(k, new Set());
    by.get(k)!.add(ip);
  }
  return [...by].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, s]) => `${k} ${f} ${setOf([...s].sort())}`);
}

/** The address part of each match a peer allows ('' for any address). */
function peerMatches(peer: Peer, f: string): string[] {
  if (peer.kind === 'any') return [''];
  if (peer.kind === 'pods') return addrMatches(peer.pods.flatMap((p) => p.ips), f);
  const k = fam(peer.cidr);
  return [[`${k} ${f} ${peer.cidr}`, ...peer.except.map((e) => `${k} ${f} != ${e}`)].join(' ')];
}

function portMatch(p: PolicyPort, port: number | undefined): string {
  const proto = p.protocol.toLowerCase();
  if (port === undefined) return `meta l4proto ${proto}`;
  return p.endPort !== undefined && p.endPort > port ? `${proto} dport ${port}-${p.endPort}` : `${proto} dport ${port}`;
}

const resolveNamed = (pod: PodView, p: PolicyPort) => pod.namedPorts.find((n) => n.name === p.port && n.protocol === p.protocol)?.port;

/** Egress to a named port: per destination pod, its own number for the name. */
function namedEgress(rule: ResolvedRule, p: PolicyPort, allPods: readonly PodView[]): string[] {
  const byPort = new Map<number, string[]>();
  for (const peer of rule.peers) {
    const pods = peer.kind === 'any' ? allPods : peer.kind === 'pods' ? peer.pods : [];
    for (const pod of pods) {
      const n = resolveNamed(pod, p);
      if (n === undefined) continue;
      if (!byPort.has(n)) byPort.set(n, []);
      byPort.get(n)!.push(...pod.ips);
    }
  }
  return [...byPort].sort(([a], [b]) => a - b).flatMap(([n, ips]) => addrMatches(ips, 'daddr').map((a) => `${a} ${portMatch(p, n)}`));
}

/** The matches (without verdict) one rule allows for `pod`. */
function ruleMatches(pod: PodView, dir: Direction, rule: ResolvedRule, allPods: readonly PodView[]): string[] {
  const addrs = rule.peers.flatMap((peer) => peerMatches(peer, field(dir)));
  if (rule.ports.length === 0) return addrs;
  const out: string[] = [];
  for (const p of rule.ports) {
    if (typeof p.port === 'string') {
      if (dir === 'Egress') {
        out.push(...namedEgress(rule, p, allPods));
        continue;
      }
      const n = resolveNamed(pod, p);
      if (n === undefined) continue;
      for (const a of addrs) out.push(`${a} ${portMatch(p, n)}`.trim());
      continue;
    }
    for (const a of addrs) out.push(`${a} ${portMatch(p, p.port)}`.trim());
  }
  return out;
}

const chainKey = (pod: PodView) => pod.ips[0].replace(/[.:]/g, '_');

function podChain(pod: PodView, dir: Direction, rules: ResolvedRule[], allPods: readonly PodView[]): NetpolChain {
  const allowed = new Set<string>();
  for (const r of rules) for (const m of ruleMatches(pod, dir, r, allPods)) allowed.add(m === '' ? 'return' : `${m} return`);
  return { rules: [...allowed, 'drop'] };
}

/** The whole table for this node's pods. */
export function buildNetpolTable(input: NetpolInput): NetpolTable {
  const views = input.pods.map(podViewOf).filter((v): v is PodView => v !== undefined);
  const ns = namespaceLabels(input.namespaces);
  const local = views.filter((v) => v.nodeName === input.nodeName).sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
  const forward: NetpolChain = { base: 'type filter hook forward priority 0 ; policy accept ;', rules: ['ct state established,related accept'] };
  const table: NetpolTable = new Map([['forward', forward]]);
  for (const dir of ['Egress', 'Ingress'] as const) {
    const prefix = dir === 'Ingress' ? 'ingress' : 'egress';
    const entries = new Map<string, Map<string, string>>(); // family → address → verdict
    for (const pod of local) {
      const rules = rulesFor(pod, dir, input.policies, views, ns);
      if (rules === undefined) continue;
      const name = `${prefix}-${chainKey(pod)}`;
      if (table.has(name)) continue; // two pods claiming one address: the first (by name) keeps it
      table.set(name, podChain(pod, dir, rules, views));
      for (const ip of pod.ips) {
        if (!entries.has(fam(ip))) entries.set(fam(ip), new Map());
        const m = entries.get(fam(ip))!;
        if (!m.has(ip)) m.set(ip, `jump ${name}`);
      }
    }
    for (const f of ['ip', 'ip6']) {
      const m = entries.get(f);
      if (m && m.size > 0) forward.rules.push(`${f} ${own(dir)} vmap { ${[...m].map(([ip, v]) => `${ip} : ${v}`).join(', ')} }`);
    }
  }
  return table;
}

const at = `inet ${NETPOL_TABLE}`;

/** The script replacing whatever table of ours is there with `t`, in one transaction. */
export function renderNetpol(t: NetpolTable): string {
  const out = [`add table ${at}`, `delete table ${at}`, `add table ${at}`];
  for (const [name, c] of t) out.push(`add chain ${at} ${name}${c.base ? ` { ${c.base} }` : ''}`);
  for (const [name, c] of t) for (const r of c.rules) out.push(`add rule ${at} ${name} ${r}`);
  return out.join('\n') + '\n';
}

/** Removes our table; `add` first so that an absent table is not an error. */
export function renderNetpolDelete(): string {
  return `add table ${at}\ndelete table ${at}\n`;
}
