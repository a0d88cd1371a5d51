/** Services and EndpointSlices for the cluster DNS tests (the shapes svc-apiserver serves). */
import type { EndpointSlice, Service } from '../../../../agent/dns/wire-types';

export function service(ns: string, name: string, spec: NonNullable<Service['spec']>): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace: ns, name, uid: `${ns}-${name}` }, spec };
}

export function slice(ns: string, name: string, svc: string, endpoints: EndpointSlice['endpoints'], ports: EndpointSlice['ports'] = [], addressType = 'IPv4'): EndpointSlice {
  return { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svc } }, addressType, endpoints, ports };
}

export const ready = { ready: true, serving: true, terminating: false };
export const notReady = { ready: false, serving: false, terminating: false };
