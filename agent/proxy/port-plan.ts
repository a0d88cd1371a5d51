/**
 * What the proxy does with one Service port in one IP family, whatever writes the rules: the
 * decisions both rule writers share (nft-rules.ts for the nftables mode, ipt-rules.ts for the
 * iptables mode), so the two modes cannot drift apart. Upstream kube-proxy makes the same
 * decisions in each proxier's syncProxyRules (pkg/proxy/nftables and pkg/proxy/iptables):
 *
 * - cluster traffic goes to all usable endpoints (Cluster policy) or to this node's
 *   (internalTrafficPolicy Local); usable is upstream's CategorizeEndpoints (usableEndpoints);
 * - external traffic (node ports, external and load-balancer IPs) under the Cluster policy is
 *   masqueraded and goes to all endpoints; under the Local policy the node's own traffic may use
 *   any endpoint (masqueraded) and other traffic only local ones, its source address kept;
 * - traffic that finds no usable endpoint is rejected when the Service has no usable endpoint at
 *   all, and dropped when only the traffic policy leaves none (upstream).
 */
import { usableEndpoints, type EndpointInfo, type ServicePortInfo } from './service-ports';

/** What traffic that finds no usable endpoint gets. */
export type NoEndpointVerdict = 'reject' | 'drop';

export interface ExternalPlan {
  /**
   * How external traffic is sent on: 'cluster' (masquerade, all endpoints), 'local' (the node's
   * own traffic as 'cluster', other traffic to local endpoints with its source kept), or undefined
   * (no endpoint at all: no dispatch, only the no-endpoint verdict).
   */
  dispatch: 'cluster' | 'local' | undefined;
  /** External traffic from elsewhere finds an endpoint; when false it gets `noEndpoint`. */
  reachable: boolean;
}

export interface PortPlan {
  /** The port with this family's endpoints only. */
  sp: ServicePortInfo;
  /** This family's cluster IPs (never empty: a port without one has no plan). */
  clusterIPs: string[];
  /** This family's external and load-balancer IPs. */
  externalIPs: string[];
  /** The endpoints cluster traffic uses under the Cluster policy. */
  clusterEps: EndpointInfo[];
  /** This node's usable endpoints (for the Local policies). */
  localEps: EndpointInfo[];
  /** A Local policy applies and this node has usable endpoints: a local dispatch exists. */
  usesLocal: boolean;
  /** Every endpoint that gets a DNAT rule (the cluster ones, plus local ones when usesLocal). */
  chainEps: EndpointInfo[];
  /** Where cluster-IP traffic goes: the cluster dispatch, the local one, or nowhere (`noEndpoint`). */
  internal: 'cluster' | 'local' | undefined;
  noEndpoint: NoEndpointVerdict;
  /** Undefined when the port has neither a node port nor an external IP in this family. */
  external: ExternalPlan | undefined;
}

function unionOf(a: readonly EndpointInfo[], b: readonly EndpointInfo[]): EndpointInfo[] {
  const keys = new Set(a.map((e) => `${e.ip}/${e.port}`));
  return [...a, ...b.filter((e) => !keys.has(`${e.ip}/${e.port}`))];
}

/** The plan of one Service port in the family whose addresses `has` accepts; undefined when the port has no cluster IP there. */
export function planPort(all: ServicePortInfo, has: (ip: string) => boolean): PortPlan | undefined {
  const clusterIPs = all.clusterIPs.filter(has);
  if (clusterIPs.length === 0) return undefined;
  const sp: ServicePortInfo = { ...all, endpoints: all.endpoints.filter((e) => has(e.ip)) };
  const clusterEps = usableEndpoints(sp, false);
  const localEps = usableEndpoints(sp, true);
  const usesLocal = (sp.internalLocal || sp.externalLocal) && localEps.length > 0;
  const internal = sp.internalLocal ? (localEps.length > 0 ? 'local' : undefined) : clusterEps.length > 0 ? 'cluster' : undefined;
  const externalIPs = sp.externalIPs.filter(has);
  let external: ExternalPlan | undefined;
  if (sp.nodePort > 0 || externalIPs.length > 0) {
    const dispatch = clusterEps.length === 0 ? undefined : sp.externalLocal ? 'local' : 'cluster';
    external = { dispatch, reachable: clusterEps.length > 0 && (!sp.externalLocal || localEps.length > 0) };
  }
  return {
    sp,
    clusterIPs,
    externalIPs,
    clusterEps,
    localEps,
    usesLocal,
    chainEps: usesLocal ? unionOf(clusterEps, localEps) : clusterEps,
    internal,
    noEndpoint: clusterEps.length === 0 ? 'reject' : 'drop',
    external,
  };
}
