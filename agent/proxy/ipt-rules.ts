/**
 * The iptables mode's rules for one family, from the Service ports (pure: same input, same
 * rules). The layout is upstream kube-proxy's iptables mode (pkg/proxy/iptables/proxier.go); the
 * decisions (which endpoints, reject or drop, masquerading) are the nftables mode's, from
 * port-plan.ts.
 *
 * Chain names: upstream's, with `SVC-` where upstream has `KUBE-` (SVC-SERVICES, SVC-NODEPORTS,
 * SVC-SVC-<hash>, SVC-SEP-<hash>, ...). The nftables mode deliberately keeps to a table of its
 * own (`svc-proxy`, not upstream's `kube-proxy`) so that it never touches, nor is touched by, a
 * kube-proxy or kubelet on the same host; iptables has no private tables, so the prefix plays that
 * part: upstream's kube-proxy (and its `--cleanup`) and the kubelet own the KUBE-* names, and
 * every chain whose name starts with SVC- in the nat and filter tables is ours (found at start,
 * deleted at the clean stop).
 *
 * - nat: PREROUTING and OUTPUT jump to SVC-SERVICES: per Service port, the cluster IP to
 *   SVC-SVC-… (or SVC-SVL-… under internalTrafficPolicy Local), external IPs to SVC-EXT-…, and last
 *   the node's own addresses (addrtype LOCAL, loopback excluded as in the nftables mode) to
 *   SVC-NODEPORTS, which sends node ports to SVC-EXT-…; POSTROUTING jumps to SVC-POSTROUTING,
 *   which masquerades (random-fully) what SVC-MARK-MASQ marked with 0x4000.
 * - SVC-SVC-… masquerades cluster-IP traffic from outside the cluster CIDRs (or all with
 *   masqueradeAll), then picks an endpoint: ClientIP affinity first (the `recent` module, one list
 *   per endpoint chain, with the affinity timeout), then `statistic --mode random` with
 *   probability 1/(n-i) for the i-th of n endpoints, the last taken unconditionally.
 * - SVC-SEP-… (one per endpoint): hairpin masquerade, the affinity list's update, DNAT.
 * - filter: SVC-SERVICES (from FORWARD and OUTPUT, new connections) rejects cluster IPs without
 *   usable endpoints, SVC-EXTERNAL-SERVICES (from INPUT and FORWARD) node ports and external IPs
 *   without them (DROP when endpoints exist but the traffic policy leaves none), as upstream.
 */
import type { Family } from './nft-model';
import { familyWords, MASQ_MARK, shortHash, type RuleOptions } from './nft-rules';
import { planPort, type NoEndpointVerdict, type PortPlan } from './port-plan';
import type { EndpointInfo, ServicePortInfo } from './service-ports';

export type IptTableName = 'nat' | 'filter';

/** The rules of one family: per table, chains in declaration order, each with its rules (the text after `-A <chain> `). */
export interface IptRules {
  family: Family;
  tables: Record<IptTableName, Map<string, string[]>>;
}

/** Every chain of ours starts with this (upstream's start with KUBE-). */
export const CHAIN_PREFIX = 'SVC-';
export const SERVICES = 'SVC-SERVICES';
export const EXTERNAL_SERVICES = 'SVC-EXTERNAL-SERVICES';
export const NODEPORTS = 'SVC-NODEPORTS';
export const POSTROUTING = 'SVC-POSTROUTING';
export const MARK_MASQ = 'SVC-MARK-MASQ';

/** A rule in a built-in chain that jumps into ours (upstream's iptablesJumpChains). */
export interface Jump {
  table: IptTableName;
  chain: string;
  /** The rule after `-A <chain> `; its target is one of our chains. */
  rule: string;
}

const newConn = '-m conntrack --ctstate NEW';
export const JUMPS: readonly Jump[] = [
  { table: 'filter', chain: 'INPUT', rule: `${newConn} -m comment --comment "svc-proxy externally-visible service portals" -j ${EXTERNAL_SERVICES}` },
  { table: 'filter', chain: 'FORWARD', rule: `${newConn} -m comment --comment "svc-proxy externally-visible service portals" -j ${EXTERNAL_SERVICES}` },
  { table: 'filter', chain: 'FORWARD', rule: `${newConn} -m comment --comment "svc-proxy service portals" -j ${SERVICES}` },
  { table: 'filter', chain: 'OUTPUT', rule: `${newConn} -m comment --comment "svc-proxy service portals" -j ${SERVICES}` },
  { table: 'nat', chain: 'PREROUTING', rule: `-m comment --comment "svc-proxy service portals" -j ${SERVICES}` },
  { table: 'nat', chain: 'OUTPUT', rule: `-m comment --comment "svc-proxy service portals" -j ${SERVICES}` },
  { table: 'nat', chain: 'POSTROUTING', rule: `-m comment --comment "svc-proxy postrouting rules" -j ${POSTROUTING}` },
];

/** "ns/name:port" (upstream's ServicePortName; the number when the port is unnamed). */
const portName = (sp: ServicePortInfo) => `${sp.namespace}/${sp.name}:${sp.portName || String(sp.port)}`;

/** A hashed chain name as upstream's: prefix + 16 base32 characters of a hash of the port (and endpoint). */
function hashed(kind: 'SVC' | 'SVL' | 'EXT' | 'SEP', sp: ServicePortInfo, ep?: EndpointInfo): string {
  const id = `${portName(sp)}${sp.protocol.toLowerCase()}${ep ? `${ep.ip}:${ep.port}` : ''}`;
  return `${CHAIN_PREFIX}${kind}-${shortHash(id, 16)}`;
}

const comment = (text: string) => `-m comment --comment "${text}"`;

interface Words {
  family: Family;
  host: (ip: string) => string;
  loopback: string;
  has: (ip: string) => boolean;
}

function wordsOf(family: Family): Words {
  const fw = familyWords(family);
  return family === 'ip'
    ? { family, host: (ip) => `${ip}/32`, loopback: '127.0.0.0/8', has: fw.has }
    : { family, host: (ip) => `${ip}/128`, loopback: '::1/128', has: fw.has };
}

/** Builds every rule of one family. */
export function buildIptRules(family: Family, ports: readonly ServicePortInfo[], o: RuleOptions): IptRules {
  const w = wordsOf(family);
  const nat = new Map<string, string[]>([
    [SERVICES, []],
    [NODEPORTS, []],
    [POSTROUTING, [`-m mark ! --mark ${MASQ_MARK}/${MASQ_MARK} -j RETURN`, `-j MARK --xor-mark ${MASQ_MARK}`, `${comment('svc-proxy service traffic requiring SNAT')} -j MASQUERADE --random-fully`]],
    [MARK_MASQ, [`-j MARK --or-mark ${MASQ_MARK}`]],
  ]);
  const filter = new Map<string, string[]>([
    [SERVICES, []],
    [EXTERNAL_SERVICES, []],
  ]);
  const r: IptRules = { family, tables: { nat, filter } };
  for (const sp of ports) {
    const plan = planPort(sp, w.has);
    if (plan) addPort(r, w, plan, o);
  }
  // Last in SVC-SERVICES (upstream: "this must be the last rule in this chain"): the node's own addresses' node ports.
  nat.get(SERVICES)!.push(`${comment('svc-proxy service nodeports')} ! -d ${w.loopback} -m addrtype --dst-type LOCAL -j ${NODEPORTS}`);
  return r;
}

const protoMatch = (sp: ServicePortInfo, port: number) => `-p ${sp.protocol.toLowerCase()} -m ${sp.protocol.toLowerCase()} --dport ${port}`;

/** The rules that pick an endpoint chain: affinity first (when on), then a random one. */
function dispatch(sp: ServicePortInfo, eps: readonly EndpointInfo[]): string[] {
  const rules: string[] = [];
  if (sp.affinityTimeoutSeconds > 0) {
    for (const e of eps) {
      const sep = hashed('SEP', sp, e);
      rules.push(`${comment(`${portName(sp)} -> ${e.ip}:${e.port}`)} -m recent --name ${sep} --rcheck --seconds ${sp.affinityTimeoutSeconds} --reap -j ${sep}`);
    }
  }
  eps.forEach((e, i) => {
    const target = `-j ${hashed('SEP', sp, e)}`;
    const pick = i < eps.length - 1 ? ` -m statistic --mode random --probability ${(1 / (eps.length - i)).toFixed(10)}` : '';
    rules.push(`${comment(`${portName(sp)} -> ${e.ip}:${e.port}`)}${pick} ${target}`);
  });
  return rules;
}

function endpointChain(w: Words, sp: ServicePortInfo, e: EndpointInfo): string[] {
  const sep = hashed('SEP', sp, e);
  const c = comment(portName(sp));
  const to = w.family === 'ip' ? `${e.ip}:${e.port}` : `[${e.ip}]:${e.port}`;
  const affinity = sp.affinityTimeoutSeconds > 0 ? ` -m recent --name ${sep} --set` : '';
  return [`${c} -s ${w.host(e.ip)} -j ${MARK_MASQ}`, `${c}${affinity} -p ${sp.protocol.toLowerCase()} -m ${sp.protocol.toLowerCase()} -j DNAT --to-destination ${to}`];
}

function addPort(r: IptRules, w: Words, plan: PortPlan, o: RuleOptions): void {
  const { sp, clusterIPs, clusterEps, localEps } = plan;
  const nat = r.tables.nat;
  const svc = hashed('SVC', sp);
  const svl = hashed('SVL', sp);
  const name = portName(sp);
  if (clusterEps.length > 0) {
    const masq = o.masqueradeAll ? [''] : o.clusterCIDRs.filter((c) => w.has(c.split('/')[0]));
    const rules = clusterIPs.flatMap((ip) => masq.map((cidr) => `${comment(`${name} cluster IP`)} -d ${w.host(ip)} ${protoMatch(sp, sp.port)}${cidr ? ` ! -s ${cidr}` : ''} -j ${MARK_MASQ}`));
    nat.set(svc, [...rules, ...dispatch(sp, clusterEps)]);
  }
  if (plan.usesLocal) nat.set(svl, dispatch(sp, localEps));
  for (const e of plan.chainEps) nat.set(hashed('SEP', sp, e), endpointChain(w, sp, e));
  const internal = plan.internal === 'local' ? svl : plan.internal === 'cluster' ? svc : '';
  for (const ip of clusterIPs) {
    if (internal) nat.get(SERVICES)!.push(`${comment(`${name} cluster IP`)} -d ${w.host(ip)} ${protoMatch(sp, sp.port)} -j ${internal}`);
    else r.tables.filter.get(SERVICES)!.push(noEndpointRule(name, plan.noEndpoint, `-d ${w.host(ip)} ${protoMatch(sp, sp.port)}`));
  }
  addExternal(r, w, plan, svc, svl);
}

function noEndpointRule(name: string, verdict: NoEndpointVerdict, match: string): string {
  return verdict === 'reject' ? `${comment(`${name} has no endpoints`)} ${match} -j REJECT` : `${comment(`${name} has no local endpoints`)} ${match} -j DROP`;
}

/** Node ports and external IPs: SVC-EXT-… and the jumps to it, or the filter table's verdicts. */
function addExternal(r: IptRules, w: Words, plan: PortPlan, svc: string, svl: string): void {
  const { sp, externalIPs, external } = plan;
  if (!external) return;
  const { nat, filter } = r.tables;
  const name = portName(sp);
  const ext = hashed('EXT', sp);
  if (external.dispatch === 'cluster') nat.set(ext, [`${comment(`masquerade traffic for ${name} external destinations`)} -j ${MARK_MASQ}`, `-j ${svc}`]);
  else if (external.dispatch === 'local') {
    // Local policy: the node's own traffic may go to any endpoint (masqueraded), external traffic to local ones only, its source kept.
    const rules = [`${comment(`masquerade LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j ${MARK_MASQ}`, `${comment(`route LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j ${svc}`];
    if (plan.localEps.length > 0) rules.push(`-j ${svl}`);
    nat.set(ext, rules);
  }
  const dispatched = external.dispatch !== undefined;
  if (sp.nodePort > 0) {
    if (dispatched) nat.get(NODEPORTS)!.push(`${comment(name)} ${protoMatch(sp, sp.nodePort)} -j ${ext}`);
    if (!external.reachable) filter.get(EXTERNAL_SERVICES)!.push(noEndpointRule(name, plan.noEndpoint, `! -d ${w.loopback} -m addrtype --dst-type LOCAL ${protoMatch(sp, sp.nodePort)}`));
  }
  for (const ip of externalIPs) {
    if (dispatched) nat.get(SERVICES)!.push(`${comment(`${name} external IP`)} -d ${w.host(ip)} ${protoMatch(sp, sp.port)} -j ${ext}`);
    if (!external.reachable) filter.get(EXTERNAL_SERVICES)!.push(noEndpointRule(name, plan.noEndpoint, `-d ${w.host(ip)} ${protoMatch(sp, sp.port)}`));
  }
}
