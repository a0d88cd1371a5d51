/**
 * A pod's DNS configuration for the runtime (the CRI PodSandboxConfig's dns_config, which the
 * runtime writes as the pod's /etc/resolv.conf), by dnsPolicy, as the kubelet's
 * pkg/kubelet/network/dns Configurer.GetPodDNS:
 * - ClusterFirst (off the host network) and ClusterFirstWithHostNet: the clusterDNS servers only,
 *   search <ns>.svc.<domain> svc.<domain> <domain> then the host's searches, options ndots:5 (the
 *   host's options are not kept). Without clusterDNS: Default, with a MissingClusterDNS warning
 *   when clusterDomain is set (upstream warns whenever; see below).
 * - ClusterFirst on the host network, and Default: the host's servers, searches and options.
 * - None: nothing but the pod's dnsConfig.
 * The pod's dnsConfig is then appended (nameservers and searches without duplicates, options
 * replacing the same name), and the result cut to upstream's limits: 3 nameservers, 32 search
 * domains, none longer than 253 characters, a search line of at most 2048 characters, each cut
 * reported as a DNSConfigForming warning (upstream's event reason and message).
 */
import type { Pod } from '../api/core-v1';
import type { DnsConfig } from '../cri';
import { mergeOptions, type ResolverConfig } from './resolv-conf';

export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const MAX_DOMAIN_LENGTH = 253;

export interface PodDnsInput {
  pod: Pod;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /**
   * The host's resolver configuration (readHostResolverConfig); undefined when it was not read:
   * then the host part is left to the runtime, which copies the node's resolv.conf when a
   * sandbox has no DNS settings.
   */
  host?: ResolverConfig;
}

export interface PodDnsWarning {
  reason: 'MissingClusterDNS' | 'DNSConfigForming';
  message: string;
  /** Set for MissingClusterDNS: upstream also records it on the Node, with this message. */
  nodeMessage?: string;
}

const unique = (xs: readonly string[]) => [...new Set(xs)];

function policyOf(pod: Pod): 'cluster' | 'host' | 'none' {
  switch (pod.spec.dnsPolicy ?? 'ClusterFirst') {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
      return pod.spec.hostNetwork ? 'host' : 'cluster';
    default:
      // The API server refuses other values; upstream falls back to ClusterFirst as well.
      return 'cluster';
  }
}

/** The pod's DNS settings (undefined: leave it to the runtime) and the warnings to record on the pod. */
export function podDnsConfig(input: PodDnsInput): { config: DnsConfig | undefined; warnings: PodDnsWarning[] } {
  const { pod } = input;
  const warnings: PodDnsWarning[] = [];
  const host = input.host ?? { servers: [], searches: [], options: [] };
  let base: DnsConfig;
  let policy = policyOf(pod);
  if (policy === 'cluster' && input.clusterDNS.length === 0) {
    // Upstream warns on every such pod. svc runs without cluster DNS by default (no clusterDNS, no
    // clusterDomain): the warning is kept for a half-configured node (a domain but no server), where
    // it points at a mistake, and not made for every pod of a node that has no cluster DNS at all.
    if (input.clusterDomain !== '') {
      const nodeMessage = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
      warnings.push({ reason: 'MissingClusterDNS', message: `pod: "${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})". ${nodeMessage}`, nodeMessage });
    }
    policy = 'host';
  }
  if (policy === 'none') base = { servers: [], searches: [], options: [] };
  else if (policy === 'host') base = { servers: [...host.servers], searches: [...host.searches], options: [...host.options] };
  else {
    const d = input.clusterDomain;
    const ns = pod.metadata.namespace ?? 'default';
    const cluster = d ? [`${ns}.svc.${d}`, `svc.${d}`, d] : [];
    base = { servers: [...input.clusterDNS], searches: unique([...cluster, ...host.searches]), options: ['ndots:5'] };
  }
  const extra = pod.spec.dnsConfig;
  if (extra) {
    base.servers = unique([...(base.servers ?? []), ...(extra.nameservers ?? [])]);
    base.searches = unique([...(base.searches ?? []), ...(extra.searches ?? [])]);
    base.options = mergeOptions(base.options ?? [], (extra.options ?? []).map((o) => (o.value !== undefined && o.value !== '' ? `${o.name}:${o.value}` : o.name)));
  }
  const servers = fitNameservers(base.servers ?? [], warnings);
  const searches = fitSearches(base.searches ?? [], warnings);
  const config: DnsConfig = { servers, searches, options: base.options ?? [] };
  if (input.host === undefined && policy === 'host' && servers.length + searches.length + config.options!.length === 0) return { config: undefined, warnings };
  return { config, warnings };
}

function fitNameservers(servers: string[], warnings: PodDnsWarning[]): string[] {
  if (servers.length <= MAX_DNS_NAMESERVERS) return servers;
  const kept = servers.slice(0, MAX_DNS_NAMESERVERS);
  warnings.push({ reason: 'DNSConfigForming', message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${kept.join(' ')}` });
  return kept;
}

function fitSearches(searches: string[], warnings: PodDnsWarning[]): string[] {
  let exceeded = false;
  let kept = searches;
  if (kept.length > MAX_DNS_SEARCH_PATHS) {
    kept = kept.slice(0, MAX_DNS_SEARCH_PATHS);
    exceeded = true;
  }
  // glibc aborts on a search domain longer than a DNS name may be: such domains are dropped.
  const short = kept.filter((s) => s.length <= MAX_DOMAIN_LENGTH);
  if (short.length !== kept.length) exceeded = true;
  kept = short;
  // Whole domains are cut from the end until the line fits.
  while (kept.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    kept = kept.slice(0, -1);
    exceeded = true;
  }
  if (exceeded) {
    warnings.push({ reason: 'DNSConfigForming', message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${kept.join(' ')}` });
  }
  return kept;
}
