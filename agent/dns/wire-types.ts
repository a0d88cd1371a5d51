/**
 * The parts of core/v1 Service and discovery/v1 EndpointSlice the cluster DNS server reads (the
 * wire shapes svc-apiserver serves; every other field is ignored).
 */
import type { KObject } from '../../apiserver/api/types';

export interface ServicePort {
  name?: string;
  protocol?: string;
  port: number;
}

export interface Service extends KObject {
  spec?: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    externalName?: string;
    ports?: ServicePort[];
    publishNotReadyAddresses?: boolean;
  };
}

export interface Endpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
}

export interface EndpointSlice extends KObject {
  addressType?: string;
  endpoints?: Endpoint[];
  ports?: { name?: string; protocol?: string; port?: number }[];
}

/** The label naming an EndpointSlice's Service (upstream's discovery.k8s.io LabelServiceName). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
