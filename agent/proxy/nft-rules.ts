/**
 * The proxy's table for one family, from the Service ports (pure: same input, same table). The
 * structure follows upstream kube-proxy's nftables mode (pkg/proxy/nftables/proxier.go):
 *
 * - base chains: nat-prerouting and nat-output jump to `services`, which looks destination,
 *   protocol and port up in the `service-ips` verdict map and, for the node's own non-loopback
 *   addresses (fib daddr type local), protocol and port in `service-nodeports`; nat-postrouting
 *   masquerades what was marked (0x4000, fully-random).
 * - filter chains at priority -110 (before DNAT) reject new connections to Services without
 *   endpoints (`no-endpoint-services`, `no-endpoint-nodeports`; "drop" when endpoints exist but
 *   none the traffic policy allows), and `cluster-ips-check` rejects cluster IPs' unknown ports.
 * - per Service port: `service-…` (all usable endpoints, the cluster policy), `local-…` (this
 *   node's, for a Local policy), `external-…` (node ports, external and load-balancer IPs).
 *   Endpoints are picked with `numgen random`; ClientIP affinity keeps a client in a per-endpoint
 *   dynamic set with the affinity timeout, checked before the random pick, and refreshed by the
 *   endpoint's own `endpoint-…` chain.
 *
 * Where this differs from upstream (for sync cost; see dispatch() and bench/README.md `proxy`):
 * upstream gives every endpoint a chain (hairpin masquerade, affinity, DNAT) and picks one with an
 * anonymous `numgen random mod N vmap { … }`. Here the pick is a cascade of rules, and without
 * affinity each rule DNATs itself, so only affinity endpoints have chains; hairpin masquerade is
 * one rule in `masquerading` matching `saddr . daddr` in the `hairpin` set (every endpoint as
 * `ip . ip`) on DNATed connections: the same connections upstream's per-endpoint rule marks.
 *
 * Masquerading as upstream: hairpin traffic (an endpoint reaching itself), external traffic under
 * the Cluster policy, locally originated traffic under the Local policy, and traffic to a cluster
 * IP from outside the cluster CIDRs (or all of it with masqueradeAll). External traffic under
 * the Local policy keeps its source address.
 */
import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { emptyTable, type Family, type NftTable } from './nft-model';
import { planPort, type PortPlan } from './port-plan';
import type { EndpointInfo, ServicePortInfo } from './service-ports';

export interface RuleOptions {
  /** The pod networks (upstream's clusterCIDR): cluster-IP traffic from elsewhere is masqueraded. */
  clusterCIDRs: readonly string[];
  /** Masquerade all traffic to cluster IPs (upstream's masqueradeAll). */
  masqueradeAll: boolean;
}

/** The fwmark bit that asks nat-postrouting to masquerade (upstream's default masqueradeBit 14). */
export const MASQ_MARK = '0x4000';
const REJECT_CHAIN = 'reject-chain';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** `length` (default 8) base32 characters of the SHA-256 of s (upstream's chain names carry such a hash: 8 in nftables, 16 in iptables). */
export function shortHash(s: string, length = 8): string {
  const d = createHash('sha256').update(s).digest();
  let bits = 0;
  let acc = 0;
  let out = '';
  for (let i = 0; out.length < length; i++) {
    acc = (acc << 8) | d[i];
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += B32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** "ns/name/tcp/port-name" (the port number when unnamed): the readable part of a Service port's names. */
function portId(sp: ServicePortInfo): string {
  return `${sp.namespace}/${sp.name}/${sp.protocol.toLowerCase()}/${sp.portName || String(sp.port)}`;
}

/** A chain or set name: prefix, hash, readable part (nft identifiers take no ':', so IPv6 colons become dots). */
function named(prefix: string, id: string): string {
  return `${prefix}-${shortHash(id)}-${id.replace(/:/g, '.')}`;
}

const epId = (sp: ServicePortInfo, e: EndpointInfo) => `${portId(sp)}__${e.ip}/${e.port}`;

export interface FamilyWords {
  ip: 'ip' | 'ip6';
  addr: 'ipv4_addr' | 'ipv6_addr';
  loopback: string;
  has: (ip: string) => boolean;
}

export function familyWords(family: Family): FamilyWords {
  return family === 'ip'
    ? { ip: 'ip', addr: 'ipv4_addr', loopback: '127.0.0.0/8', has: (a) => isIPv4(a) }
    : { ip: 'ip6', addr: 'ipv6_addr', loopback: '::1', has: (a) => isIPv6(a) };
}

/** The chains, sets and maps every sync has, whatever the Services. */
function addBase(t: NftTable, w: FamilyWords): void {
  const c = (name: string, rules: string[], base?: string) => t.chains.set(name, base ? { base, rules } : { rules });
  const newConn = 'ct state new';
  const local = `fib daddr type local ${w.ip} daddr != ${w.loopback}`;
  c('nat-prerouting', ['jump services'], 'type nat hook prerouting priority -100 ;');
  c('nat-output', ['jump services'], 'type nat hook output priority -100 ;');
  c('nat-postrouting', ['jump masquerading'], 'type nat hook postrouting priority 100 ;');
  c('filter-input', [`${newConn} jump nodeport-endpoints-check`, `${newConn} jump service-endpoints-check`], 'type filter hook input priority -110 ;');
  c('filter-forward', [`${newConn} jump service-endpoints-check`, `${newConn} jump cluster-ips-check`], 'type filter hook forward priority -110 ;');
  c('filter-output', [`${newConn} jump service-endpoints-check`], 'type filter hook output priority -110 ;');
  c('filter-output-post-dnat', [`${newConn} jump cluster-ips-check`], 'type filter hook output priority -90 ;');
  c('mark-for-masquerade', [`meta mark set meta mark or ${MASQ_MARK}`]);
  // Hairpin (a client reaching itself through a Service) is marked here, after DNAT, as upstream marks it in the endpoint chain.
  const hairpin = `ct status dnat ${w.ip} saddr . ${w.ip} daddr @hairpin jump mark-for-masquerade`;
  c('masquerading', [hairpin, `meta mark & ${MASQ_MARK} == 0 return`, `meta mark set meta mark xor ${MASQ_MARK}`, 'masquerade fully-random']);
  c('services', [`${w.ip} daddr . meta l4proto . th dport vmap @service-ips`, `${local} meta l4proto . th dport vmap @service-nodeports`]);
  c('service-endpoints-check', [`${w.ip} daddr . meta l4proto . th dport vmap @no-endpoint-services`]);
  c('nodeport-endpoints-check', [`${local} meta l4proto . th dport vmap @no-endpoint-nodeports`]);
  c('cluster-ips-check', [`${w.ip} daddr @cluster-ips reject`]);
  c(REJECT_CHAIN, ['reject']);
  addBaseSets(t, w);
}

/** The sets and verdict maps every table has (their elements come from the Service ports). */
function addBaseSets(t: NftTable, w: FamilyWords): void {
  const ipMap = `type ${w.addr} . inet_proto . inet_service : verdict ;`;
  const portMap = 'type inet_proto . inet_service : verdict ;';
  const s = (name: string, kind: 'set' | 'map', spec: string) => t.sets.set(name, { kind, spec, dynamic: false, elements: new Map() });
  s('cluster-ips', 'set', `type ${w.addr} ;`);
  s('service-ips', 'map', ipMap);
  s('service-nodeports', 'map', portMap);
  s('no-endpoint-services', 'map', ipMap);
  s('no-endpoint-nodeports', 'map', portMap);
  s('hairpin', 'set', `type ${w.addr} . ${w.addr} ;`);
}

/**
 * Memoised Service-port fragments of one family, so a sync rebuilds only the Service ports that
 * changed since the previous build (upstream's partial syncs likewise regenerate only the changed
 * Services' chains). Keyed by the ServicePortInfo object (PortsMemo keeps an unchanged port's
 * object) and the rule options; weakly held, so fragments of ports gone are collected. A
 * fragment is never changed once made: tables built from it share its chains and sets.
 */
export class FragmentCache {
  private readonly byPort = new WeakMap<ServicePortInfo, { options: string; fragment: NftTable }>();

  fragment(sp: ServicePortInfo, options: string, make: () => NftTable): NftTable {
    const hit = this.byPort.get(sp);
    if (hit && hit.options === options) return hit.fragment;
    const fragment = make();
    this.byPort.set(sp, { options, fragment });
    return fragment;
  }
}

/** Builds the whole table of one family; with a cache, unchanged Service ports reuse their fragments (same table either way). */
export function buildTable(family: Family, ports: readonly ServicePortInfo[], o: RuleOptions, cache?: FragmentCache): NftTable {
  const t = emptyTable(family);
  const w = familyWords(family);
  addBase(t, w);
  const options = JSON.stringify(o);
  for (const sp of ports) {
    if (!cache) {
      addServicePort(t, w, sp, o);
      continue;
    }
    const f = cache.fragment(sp, options, () => {
      const part = emptyTable(family);
      addBaseSets(part, w);
      addServicePort(part, w, sp, o);
      return part;
    });
    merge(t, f);
  }
  return t;
}

/** Adds a fragment's chains and sets to the table, and its elements to the table's shared sets and maps. */
function merge(t: NftTable, f: NftTable): void {
  for (const [name, c] of f.chains) t.chains.set(name, c);
  for (const [name, s] of f.sets) {
    const shared = t.sets.get(name);
    if (shared && !s.dynamic) for (const [k, v] of s.elements) shared.elements.set(k, v);
    else t.sets.set(name, s);
  }
}

function element(t: NftTable, set: string, key: string, value = ''): void {
  t.sets.get(set)?.elements.set(key, value);
}

const hostPort = (w: FamilyWords, e: EndpointInfo) => (w.ip === 'ip' ? `${e.ip}:${e.port}` : `[${e.ip}]:${e.port}`);

/**
 * The rules that pick an endpoint: affinity first (when on), then a random one. Not upstream's
 * one anonymous `numgen random mod N vmap` per Service: the kernel binds each anonymous set by
 * walking the whole transaction, quadratic in a full sync (a third of its time at 1,000 Services).
 * Instead a cascade: rule i of N matches with probability 1/(N-i), so each endpoint gets 1/N (as
 * upstream's iptables mode with `statistic mode random`). Without affinity each rule DNATs itself
 * rather than going to an endpoint chain: nft 1.0 lists every chain of the table before it adds a
 * rule, and 10,000 endpoint chains made that ~40 ms of every incremental sync.
 */
function dispatch(w: FamilyWords, sp: ServicePortInfo, eps: readonly EndpointInfo[]): string[] {
  const affinity = sp.affinityTimeoutSeconds > 0;
  const chain = (e: EndpointInfo) => named('endpoint', epId(sp, e));
  const rules = affinity ? eps.map((e) => `${w.ip} saddr @${named('affinity', epId(sp, e))} goto ${chain(e)}`) : [];
  const proto = sp.protocol.toLowerCase();
  eps.forEach((e, i) => {
    const pick = i < eps.length - 1 ? `numgen random mod ${eps.length - i} 0 ` : '';
    rules.push(affinity ? `${pick}goto ${chain(e)}` : `meta l4proto ${proto} ${pick}dnat to ${hostPort(w, e)}`);
  });
  return rules;
}

/** Every endpoint's hairpin element; with affinity, its chain (refresh the client's affinity, DNAT) and dynamic set. */
function addEndpoints(t: NftTable, w: FamilyWords, sp: ServicePortInfo, eps: readonly EndpointInfo[]): void {
  const proto = sp.protocol.toLowerCase();
  for (const e of eps) {
    element(t, 'hairpin', `${e.ip} . ${e.ip}`);
    if (sp.affinityTimeoutSeconds <= 0) continue;
    const id = epId(sp, e);
    const set = named('affinity', id);
    t.sets.set(set, { kind: 'set', spec: `type ${w.addr} ; flags dynamic,timeout ; timeout ${sp.affinityTimeoutSeconds}s ;`, dynamic: true, elements: new Map() });
    t.chains.set(named('endpoint', id), { rules: [`update @${set} { ${w.ip} saddr }`, `meta l4proto ${proto} dnat to ${hostPort(w, e)}`] });
  }
}

function addServicePort(t: NftTable, w: FamilyWords, all: ServicePortInfo, o: RuleOptions): void {
  const plan = planPort(all, w.has);
  if (!plan) return;
  const { sp, clusterIPs, clusterEps, localEps } = plan;
  const proto = sp.protocol.toLowerCase();
  const id = portId(sp);
  const svcChain = named('service', id);
  const localChain = named('local', id);
  addEndpoints(t, w, sp, plan.chainEps);
  if (clusterEps.length > 0) {
    const masq = o.masqueradeAll ? [''] : o.clusterCIDRs.filter((c) => w.has(c.split('/')[0]));
    const rules = clusterIPs.flatMap((ip) => masq.map((cidr) => `${w.ip} daddr ${ip} ${proto} dport ${sp.port}${cidr ? ` ${w.ip} saddr != ${cidr}` : ''} jump mark-for-masquerade`));
    t.chains.set(svcChain, { rules: [...rules, ...dispatch(w, sp, clusterEps)] });
  }
  if (plan.usesLocal) t.chains.set(localChain, { rules: dispatch(w, sp, localEps) });
  const none = plan.noEndpoint === 'reject' ? `goto ${REJECT_CHAIN}` : 'drop';
  const internal = plan.internal === 'local' ? localChain : plan.internal === 'cluster' ? svcChain : '';
  for (const ip of clusterIPs) {
    element(t, 'cluster-ips', ip);
    const key = `${ip} . ${proto} . ${sp.port}`;
    if (internal) element(t, 'service-ips', key, `goto ${internal}`);
    else element(t, 'no-endpoint-services', key, none);
  }
  addExternal(t, plan, { svcChain, localChain, none });
}

interface Targets {
  svcChain: string;
  localChain: string;
  none: string;
}

/** Node ports and external IPs: the external chain, or the no-endpoint verdicts. */
function addExternal(t: NftTable, plan: PortPlan, x: Targets): void {
  const { sp, externalIPs, external } = plan;
  if (!external) return;
  const proto = sp.protocol.toLowerCase();
  const extChain = named('external', portId(sp));
  let rules: string[] | undefined;
  if (external.dispatch === 'cluster') rules = ['jump mark-for-masquerade', `goto ${x.svcChain}`];
  else if (external.dispatch === 'local') {
    // Local policy: the node's own traffic may go to any endpoint (masqueraded), external traffic to local ones only, its source kept.
    rules = ['fib saddr type local jump mark-for-masquerade', `fib saddr type local goto ${x.svcChain}`];
    if (plan.localEps.length > 0) rules.push(`goto ${x.localChain}`);
  }
  if (rules) t.chains.set(extChain, { rules });
  if (sp.nodePort > 0) {
    const key = `${proto} . ${sp.nodePort}`;
    if (rules) element(t, 'service-nodeports', key, `goto ${extChain}`);
    if (!external.reachable) element(t, 'no-endpoint-nodeports', key, x.none);
  }
  for (const ip of externalIPs) {
    const key = `${ip} . ${proto} . ${sp.port}`;
    if (rules) element(t, 'service-ips', key, `goto ${extChain}`);
    if (!external.reachable) element(t, 'no-endpoint-services', key, x.none);
  }
}
