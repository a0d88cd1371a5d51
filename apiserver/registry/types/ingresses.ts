import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { rec, recs, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, int32, obj, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';
import { validateIngress } from './ingress-validation';

/**
 * networking.svc.io/v1 Ingress (upstream networking.k8s.io/v1; the message names and field numbers
 * of its generated.proto). Stored and validated, with a status sub-resource for whatever controller
 * implements it; svc has no built-in ingress controller.
 */

const V1 = 'k8s.io.api.networking.v1';

const backendSchema = obj(`${V1}.IngressBackend`, {
  service: [
    4,
    described(
      'A Service as the backend; exclusive with resource.',
      obj(`${V1}.IngressServiceBackend`, {
        name: [1, s('The referenced Service, in the namespace of the Ingress.')],
        port: [
          2,
          described(
            'The port of the referenced Service: a name or a number.',
            obj(
              `${V1}.ServiceBackendPort`,
              {
                name: [1, s('The name of the port on the Service; exclusive with number.')],
                number: [2, int32('The port number on the Service; exclusive with name.')],
              },
              { atomic: true },
            ),
          ),
        ],
      }),
    ),
  ],
  resource: [
    3,
    described(
      'Another resource in the namespace of the Ingress as the backend; exclusive with service.',
      obj(
        'k8s.io.api.core.v1.TypedLocalObjectReference',
        {
          apiGroup: [1, ptr(s('API group of the resource; empty for the core group.'))],
          kind: [2, ptr(s('Kind of the resource.'))],
          name: [3, ptr(s('Name of the resource.'))],
        },
        { atomic: true },
      ),
    ),
  ],
});

const pathSchema = obj(`${V1}.HTTPIngressPath`, {
  path: [1, s("Matched against the path of a request; must begin with '/' for the Exact and Prefix path types.")],
  pathType: [3, ptr(s('How path is matched: Exact, Prefix or ImplementationSpecific.'))],
  backend: [2, described('Where matching requests are forwarded.', backendSchema)],
});

const ruleValueSchema = obj(`${V1}.IngressRuleValue`, {
  http: [1, described('HTTP paths and their backends.', obj(`${V1}.HTTPIngressRuleValue`, { paths: [1, atomicList(pathSchema, 'Paths mapped to backends.')] }))],
});

const ruleSchema = obj(`${V1}.IngressRule`, { host: [1, s('The host requests are matched against: a DNS name, or a wildcard (*.example.com); empty matches every host.')] }, { inline: [[2, ruleValueSchema]] });

const portStatusSchema = obj(`${V1}.IngressPortStatus`, {
  port: [1, ptr(int32('The port number of the ingress port.'))],
  protocol: [2, ptr(s('The protocol of the ingress port: TCP, UDP or SCTP.'))],
  error: [3, ptr(s('The problem with this port, in CamelCase, if any.'))],
});

export const ingressSchema = withMeta(`${V1}.Ingress`, {
  spec: [
    2,
    described(
      'The desired state of the Ingress.',
      obj(`${V1}.IngressSpec`, {
        ingressClassName: [4, ptr(s('The IngressClass of this Ingress; set from the default class on create when absent.'))],
        defaultBackend: [1, described('The backend of requests no rule matches; required when there are no rules.', backendSchema)],
        tls: [
          2,
          atomicList(
            obj(`${V1}.IngressTLS`, {
              hosts: [1, atomicList(s(), 'Hosts of the TLS certificate.')],
              secretName: [2, s('The Secret holding the certificate used to terminate TLS on port 443.')],
            }),
            'TLS configuration (port 443).',
          ),
        ],
        rules: [3, atomicList(ruleSchema, 'Host rules; requests no rule matches go to the default backend.')],
      }),
    ),
  ],
  status: [
    3,
    described(
      'The current state of the Ingress, written by its controller.',
      obj(`${V1}.IngressStatus`, {
        loadBalancer: [
          1,
          described(
            'The load balancer of the Ingress.',
            obj(`${V1}.IngressLoadBalancerStatus`, {
              ingress: [
                1,
                atomicList(
                  obj(`${V1}.IngressLoadBalancerIngress`, {
                    ip: [1, s('IP of an IP-based load-balancer ingress point.')],
                    hostname: [2, s('Hostname of a DNS-based load-balancer ingress point.')],
                    ports: [4, atomicList(portStatusSchema, 'The ports of this ingress point.')],
                  }),
                  'The ingress points of the load balancer.',
                ),
              ],
            }),
          ),
        ],
      }),
    ),
  ],
});

/** Upstream formatHosts: rule hosts until three are listed; a rule after those makes it "+ N more..." (N: rules beyond three); "*" when none. */
function hostsCell(o: KObject): string {
  const rules = recs(rec(o.spec)?.rules);
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const r of rules) {
    if (hosts.length === max) more = true;
    const host = str(r.host);
    if (!more && host) hosts.push(host);
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - max} more...` : hosts.join(',');
}

/** Upstream ingressLoadBalancerStatusStringer, wide as the server prints it: unique IPs (else hostnames), sorted. */
function addressCell(o: KObject): string {
  const points = recs(rec(rec(o.status)?.loadBalancer)?.ingress);
  return [...new Set(points.map((p) => str(p.ip) || str(p.hostname) || '').filter(Boolean))].sort().join(',');
}

/** kubectl get ingress: CLASS, HOSTS, ADDRESS, PORTS (80, plus 443 with TLS), AGE. */
export function ingressColumns(now: Now): TableColumn[] {
  return [
    column('Class', 'string', 'The name of the IngressClass resource that should be used for this Ingress', (o) => str(rec(o.spec)?.ingressClassName) ?? '<none>'),
    column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule', hostsCell),
    column('Address', 'string', 'Address is a list containing ingress points for the load-balancer', addressCell),
    column('Ports', 'string', 'Ports of TLS configurations that open', (o) => (recs(rec(o.spec)?.tls).length ? '80, 443' : '80')),
    ageColumn(now),
  ];
}

export function makeIngressType(now: Now = Date.now): ResourceType {
  return {
    group: 'networking.svc.io',
    version: 'v1',
    resource: 'ingresses',
    singular: 'ingress',
    kind: 'Ingress',
    listKind: 'IngressList',
    namespaced: true,
    shortNames: ['ing'],
    schema: ingressSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: ingressColumns(now),
    validate: validateIngress,
  };
}
