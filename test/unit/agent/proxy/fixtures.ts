/** Services and EndpointSlices for the proxy's unit tests. */
import type { KObject } from '../../../../apiserver/api/types';

export interface EpSpec {
  ip: string;
  node?: string;
  ready?: boolean | null;
  serving?: boolean | null;
  terminating?: boolean | null;
}

export function service(name: string, spec: Record<string, unknown>, namespace = 'default', status?: Record<string, unknown>): KObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace, name }, spec, ...(status ? { status } : {}) };
}

export function slice(name: string, svc: string, eps: EpSpec[], ports: Record<string, unknown>[], o: { namespace?: string; addressType?: string } = {}): KObject {
  const endpoints = eps.map((e) => {
    const conditions: Record<string, unknown> = {};
    if (e.ready !== undefined) conditions.ready = e.ready;
    if (e.serving !== undefined) conditions.serving = e.serving;
    if (e.terminating !== undefined) conditions.terminating = e.terminating;
    return { addresses: [e.ip], conditions, ...(e.node ? { nodeName: e.node } : {}) };
  });
  return {
    apiVersion: 'discovery.svc.io/v1',
    kind: 'EndpointSlice',
    metadata: { namespace: o.namespace ?? 'default', name, labels: { 'kubernetes.io/service-name': svc } },
    addressType: o.addressType ?? 'IPv4',
    endpoints,
    ports,
  };
}

/** A ClusterIP Service "web" with one TCP port 80 named http. */
export const web = (extra: Record<string, unknown> = {}) => service('web', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], ...extra });
export const webPorts = [{ name: 'http', port: 8080, protocol: 'TCP' }];
