import type { KObject } from '../../api/types';
import { get, rec, recs, str, strs, type JsonMap } from '../../registry/obj-access';

/** Whether the pod is Ready (its Ready condition True). */
export function podReady(pod: KObject): boolean {
  return recs(get(pod, 'status', 'conditions')).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * Whether a pod belongs in a Service's endpoints at all (upstream's ShouldPodBeInEndpoints): it has
 * an address, has not finished, and is not being deleted unless terminating pods are included.
 */
export function podInEndpoints(pod: KObject, includeTerminating: boolean): boolean {
  const phase = get(pod, 'status', 'phase');
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  if (!str(get(pod, 'status', 'podIP'))) return false;
  return includeTerminating || !pod.metadata.deletionTimestamp;
}

/** The pod's address of the service's primary family (status.podIPs), else status.podIP. */
export function podAddress(pod: KObject, svc: KObject): string | undefined {
  const family = strs(get(svc, 'spec', 'ipFamilies'))[0];
  const ips = recs(get(pod, 'status', 'podIPs')).map((p) => str(p.ip)).filter((ip): ip is string => !!ip);
  const v6 = (ip: string) => ip.includes(':');
  const match = family ? ips.find((ip) => (family === 'IPv6') === v6(ip)) : undefined;
  return match ?? (family && ips.length ? undefined : str(get(pod, 'status', 'podIP')));
}

/**
 * The container port a service port's targetPort names in this pod (upstream's FindPort): a number
 * is itself; a name is the first container port of that name and protocol; undefined when the pod
 * has none (the pod is then left out for that port).
 */
export function findPort(pod: KObject, svcPort: JsonMap): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port;
  if (typeof target === 'number') return target;
  if (typeof target !== 'string') return undefined;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = svcPort.protocol ?? 'TCP';
  for (const c of recs(get(pod, 'spec', 'containers'))) {
    for (const p of recs(c.ports)) if (p.name === target && (p.protocol ?? 'TCP') === protocol && typeof p.containerPort === 'number') return p.containerPort;
  }
  return undefined;
}

/**
 * Upstream's endpoints controller for one Service: every selected pod's address with its ports
 * (targetPort names resolved per pod), ready ones in addresses, the others in notReadyAddresses
 * (all in addresses with publishNotReadyAddresses), repacked so each subset holds the addresses
 * sharing one set of ports (upstream's RepackSubsets), addresses and subsets in a stable order.
 */
export function endpointSubsets(svc: KObject, pods: readonly KObject[]): JsonMap[] {
  const spec = rec(svc.spec) ?? {};
  const publishNotReady = spec.publishNotReadyAddresses === true;
  const svcPorts = recs(spec.ports);
  const groups = new Map<string, { ports: JsonMap[]; ready: JsonMap[]; notReady: JsonMap[] }>();
  for (const pod of pods) {
    if (!podInEndpoints(pod, publishNotReady)) continue;
    const ip = podAddress(pod, svc);
    if (!ip) continue;
    const address: JsonMap = { ip };
    const node = str(get(pod, 'spec', 'nodeName'));
    if (node) address.nodeName = node;
    const hostname = str(get(pod, 'spec', 'hostname'));
    if (hostname && str(get(pod, 'spec', 'subdomain')) === svc.metadata.name && svc.metadata.namespace === pod.metadata.namespace) address.hostname = hostname;
    address.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    const ports: JsonMap[] = [];
    for (const sp of svcPorts) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      const ep: JsonMap = { port, protocol: sp.protocol ?? 'TCP' };
      if (str(sp.name)) ep.name = sp.name;
      if (str(sp.appProtocol)) ep.appProtocol = sp.appProtocol;
      ports.push(ep);
    }
    // A headless service without ports still lists its pods (upstream).
    if (svcPorts.length > 0 && ports.length === 0) continue;
    ports.sort((a, b) => (str(a.name) ?? '').localeCompare(str(b.name) ?? '') || Number(a.port) - Number(b.port));
    const key = JSON.stringify(ports);
    const g = groups.get(key) ?? { ports, ready: [], notReady: [] };
    groups.set(key, g);
    (publishNotReady || podReady(pod) ? g.ready : g.notReady).push(address);
  }
  const byIp = (a: JsonMap, b: JsonMap) => String(a.ip).localeCompare(String(b.ip)) || String(get(a, 'targetRef', 'name')).localeCompare(String(get(b, 'targetRef', 'name')));
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => {
      const subset: JsonMap = {};
      if (g.ready.length) subset.addresses = g.ready.sort(byIp);
      if (g.notReady.length) subset.notReadyAddresses = g.notReady.sort(byIp);
      if (g.ports.length) subset.ports = g.ports;
      return subset;
    });
}
