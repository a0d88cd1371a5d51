import type { Cause } from '../../api/errors';
import { duplicate, index, invalid, tooMany } from '../../registry/field-errors';
import { recs, str, strs, type JsonMap } from '../../registry/obj-access';
import { canonicalIp, familyOf, type IpFamily } from '../../../common/cidr';

const POLICIES = ['SingleStack', 'PreferDualStack', 'RequireDualStack'];

/**
 * Upstream's initIPFamilyFields for a Service that gets cluster IPs (not ExternalName): the policy
 * defaulted (RequireDualStack when two families or two IPs are asked for; headless services without
 * a selector take every family the cluster has), spec.ipFamilies filled from the clusterIPs given and
 * the cluster's families (primary first), and the combinations this cluster cannot serve refused.
 * `clusterFamilies` is the service CIDRs' families, primary first. Changes spec in place.
 */
export function resolveIpFamilies(spec: JsonMap, clusterFamilies: readonly IpFamily[]): Cause[] {
  const out: Cause[] = [];
  const dualCluster = clusterFamilies.length === 2;
  const headless = spec.clusterIP === 'None';
  const ips = strs(spec.clusterIPs).filter((ip) => ip !== 'None');
  const families = [...strs(spec.ipFamilies)] as IpFamily[];
  if (typeof spec.ipFamilyPolicy !== 'string' || !spec.ipFamilyPolicy) {
    if (families.length === 2 || ips.length === 2) spec.ipFamilyPolicy = 'RequireDualStack';
    else if (headless && !spec.selector) spec.ipFamilyPolicy = dualCluster ? 'RequireDualStack' : 'SingleStack';
    else spec.ipFamilyPolicy = 'SingleStack';
  }
  const policy = String(spec.ipFamilyPolicy);
  if (!POLICIES.includes(policy)) return out; // the schema reports the unsupported value
  if (policy === 'RequireDualStack' && !dualCluster) {
    out.push(invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  }
  if (families.length > 2) out.push(tooMany('spec.ipFamilies', families.length, 2));
  families.forEach((f, i) => {
    if (families.indexOf(f) !== i) out.push(duplicate(index('spec.ipFamilies', i), f));
    else if (!clusterFamilies.includes(f)) out.push(invalid(index('spec.ipFamilies', i), f, 'not configured on this cluster'));
  });
  if (ips.length > 2) out.push(tooMany('spec.clusterIPs', ips.length, 2));
  ips.forEach((ip, i) => {
    const f = familyOf(ip);
    if (!f) return; // the type's validation names the bad address
    if (!clusterFamilies.includes(f)) out.push(invalid(index('spec.clusterIPs', i), ip, `${f} is not configured on this cluster`));
    else if (families[i] === undefined) families[i] = f;
    else if (families[i] !== f) out.push(invalid(index('spec.ipFamilies', i), families[i], `does not match the IP family of clusterIPs[${i}] (${ip})`));
  });
  if (ips.length === 2 && familyOf(ips[0]) === familyOf(ips[1])) out.push(invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  if (out.length) return out;
  if (families.length === 0) families.push(clusterFamilies[0]);
  if (policy !== 'SingleStack' && dualCluster && families.length === 1) families.push(clusterFamilies.find((f) => f !== families[0])!);
  if (policy === 'SingleStack' && families.length > 1) {
    out.push(invalid('spec.ipFamilyPolicy', policy, "must be RequireDualStack or PreferDualStack when multiple 'ipFamilies' are specified"));
  }
  spec.ipFamilies = families;
  return out;
}

/** The clusterIPs in canonical text (what is stored and allocated), "None" kept. */
export function canonicalClusterIps(spec: JsonMap): void {
  const ips = strs(spec.clusterIPs).map((ip) => (ip === 'None' ? ip : (canonicalIp(ip) ?? ip)));
  if (ips.length) {
    spec.clusterIPs = ips;
    spec.clusterIP = ips[0];
  }
}

/** Node ports a service type holds: NodePort, and LoadBalancer unless allocateLoadBalancerNodePorts is false. */
export function needsNodePorts(spec: JsonMap): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

/** LoadBalancer services with externalTrafficPolicy Local get a health check node port (upstream). */
export function needsHealthCheckPort(spec: JsonMap): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

/** What a stored Service holds: its cluster IPs and node ports (health check port included). */
export function heldBy(spec: JsonMap | undefined): { ips: string[]; ports: number[] } {
  if (!spec || spec.type === 'ExternalName') return { ips: [], ports: [] };
  const ips = strs(spec.clusterIPs).filter((ip) => ip !== 'None' && ip !== '');
  if (!ips.length && str(spec.clusterIP) && spec.clusterIP !== 'None') ips.push(spec.clusterIP as string);
  const ports = recs(spec.ports).map((p) => p.nodePort).filter((n): n is number => typeof n === 'number' && n > 0);
  if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) ports.push(spec.healthCheckNodePort);
  return { ips, ports: [...new Set(ports)] };
}
