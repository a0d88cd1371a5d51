import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { metaConditionSchema, withMeta } from '../common-schemas';
import { messages, oneOf, portNum, portNumOrName, protocol, qualifiedName } from '../common-validation';
import { child, coveredByDeclarative, duplicate, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { validateLabels } from '../meta-validation';
import { dns1123LabelErrors, dns1123SubdomainErrors, ipErrors } from '../../api/name-validation';
import { ensureRec, get, rec, recs, str, strAt, strs, type JsonMap } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, atomicMap, bool, described, int32, intOrStr, mapList, obj, ptr, str as s, strEnum, withDefault } from '../schema-builders';
import { ageColumn, column, formatLabels, type Now } from '../table';

/** core/v1 Service. Cluster IPs and node ports are allocated inside the store's write (store/service-alloc/), after admission and before this validation. */

export const SERVICE_TYPES: readonly string[] = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const AFFINITIES: readonly string[] = ['ClientIP', 'None'];
const TRAFFIC_POLICIES: readonly string[] = ['Cluster', 'Local'];

const V1 = 'k8s.io.api.core.v1';

const servicePortSchema = obj(
  `${V1}.ServicePort`,
  {
    name: [1, s('The name of this port within the service; must be a DNS_LABEL.')],
    protocol: [2, withDefault(strEnum(['TCP', 'UDP', 'SCTP'], 'The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.'), 'TCP')],
    appProtocol: [6, ptr(s('The application protocol for this port, used as a hint.'))],
    port: [3, ptr(int32('The port this service exposes.'))],
    targetPort: [4, intOrStr('Number or name of the port on the pods; defaults to port.')],
    nodePort: [5, int32('The port on each node on which this service is exposed when type is NodePort or LoadBalancer.')],
  },
  { required: ['port'] },
);

export const serviceSchema = withMeta(`${V1}.Service`, {
  spec: [
    2,
    described('Spec defines the behavior of a service.', obj(`${V1}.ServiceSpec`, {
      // Upstream: patchMergeKey port, listMapKeys port + protocol.
      ports: [1, mapList(servicePortSchema, ['port', 'protocol'], 'The list of ports that are exposed by this service.')],
      selector: [2, atomicMap(s(), 'Route service traffic to pods with label keys and values matching this selector.')], // +mapType=atomic upstream
      clusterIP: [3, s('The IP address of the service, usually assigned randomly; None makes a headless service.')],
      clusterIPs: [18, atomicList(s(), 'The IP addresses of the service, one per IP family; clusterIPs[0] equals clusterIP.')],
      type: [4, strEnum(SERVICE_TYPES, 'How the service is exposed: ClusterIP, ExternalName, NodePort or LoadBalancer.')],
      externalIPs: [5, atomicList(s(), 'IP addresses for which nodes in the cluster will also accept traffic for this service.')],
      sessionAffinity: [7, strEnum(AFFINITIES, 'ClientIP or None: whether connections from one client go to the same pod.')],
      loadBalancerIP: [8, s('Deprecated: the IP requested of the load balancer, where supported.')],
      loadBalancerSourceRanges: [9, atomicList(s(), 'Client CIDRs the cloud load balancer restricts traffic to.')],
      externalName: [10, s('The external reference (a DNS name) that DNS returns as a CNAME; requires type ExternalName.')],
      externalTrafficPolicy: [11, strEnum(TRAFFIC_POLICIES, 'How external traffic is routed to endpoints: Cluster or Local.')],
      healthCheckNodePort: [12, int32('The health check node port for a LoadBalancer service with Local traffic policy.')],
      publishNotReadyAddresses: [13, bool('Publish addresses of endpoints regardless of their readiness.')],
      sessionAffinityConfig: [
        14,
        described(
          'The configurations of session affinity.',
          obj(`${V1}.SessionAffinityConfig`, {
            clientIP: [
              1,
              described(
                'The configurations of ClientIP session affinity.',
                obj(`${V1}.ClientIPConfig`, { timeoutSeconds: [1, ptr(int32('The seconds of ClientIP sticky session; default 10800 (3 hours).'))] }),
              ),
            ],
          }),
        ),
      ],
      ipFamilies: [19, atomicList(strEnum(['IPv4', 'IPv6']), 'The IP families (IPv4, IPv6) assigned to this service.')],
      ipFamilyPolicy: [17, ptr(strEnum(['SingleStack', 'PreferDualStack', 'RequireDualStack'], 'The dual-stack-ness requested or required by this service.'))],
      allocateLoadBalancerNodePorts: [20, ptr(bool('Whether NodePorts are allocated for a LoadBalancer service; default true.'))],
      loadBalancerClass: [21, ptr(s('The class of the load balancer implementation this service belongs to.'))],
      internalTrafficPolicy: [22, ptr(strEnum(TRAFFIC_POLICIES, 'How cluster-internal traffic is routed: Cluster or Local.'))],
      trafficDistribution: [23, ptr(s('How traffic is distributed to endpoints, e.g. PreferClose.'))],
    })),
  ],
  status: [
    3,
    described('Most recently observed status of the service.', obj(`${V1}.ServiceStatus`, {
      loadBalancer: [
        1,
        described('The current status of the load balancer, if one is present.', obj(`${V1}.LoadBalancerStatus`, {
          ingress: [
            1,
            atomicList(
              obj(`${V1}.LoadBalancerIngress`, {
                ip: [1, s('IP of an IP-based load-balancer ingress point.')],
                hostname: [2, s('Hostname of a DNS-based load-balancer ingress point.')],
                ipMode: [3, ptr(s('How the load-balancer IP behaves: VIP or Proxy.'))],
                ports: [
                  4,
                  atomicList(
                    obj(`${V1}.PortStatus`, {
                      port: [1, ptr(int32('The port number of the service port.'))],
                      protocol: [2, ptr(s('The protocol of the service port: TCP, UDP or SCTP.'))],
                      error: [3, ptr(s('The problem with this service port, in CamelCase, if any.'))],
                    }),
                    'The service ports of this ingress point.',
                  ),
                ],
              }),
              'The ingress points of the load balancer.',
            ),
          ],
        })),
      ],
      conditions: [2, mapList(metaConditionSchema, ['type'], 'Current service state.')],
    })),
  ],
});

function externallyAccessible(spec: JsonMap): boolean {
  const t = spec.type;
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && strs(spec.externalIPs).length > 0);
}

/** Upstream SetDefaults_Service, plus keeping clusterIP and clusterIPs[0] in step (the v1 REST normalisation). */
function defaults(o: KObject): void {
  const spec = ensureRec(o, 'spec');
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP' && typeof get(spec, 'sessionAffinityConfig', 'clientIP', 'timeoutSeconds') !== 'number') {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  if (!spec.type) spec.type = 'ClusterIP';
  for (const p of recs(spec.ports)) {
    if (!p.protocol) p.protocol = 'TCP';
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (!spec.internalTrafficPolicy && spec.type !== 'ExternalName') spec.internalTrafficPolicy = 'Cluster';
  if (spec.type === 'LoadBalancer' && typeof spec.allocateLoadBalancerNodePorts !== 'boolean') spec.allocateLoadBalancerNodePorts = true;
  const ips = strs(spec.clusterIPs);
  if (str(spec.clusterIP) && ips.length === 0) spec.clusterIPs = [spec.clusterIP];
  else if (!str(spec.clusterIP) && ips.length > 0) spec.clusterIP = ips[0];
}

function validatePorts(spec: JsonMap): Cause[] {
  const out: Cause[] = [];
  const ports = recs(spec.ports);
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') out.push(required('spec.ports'));
  const names = new Set<string>();
  const pairs = new Set<string>();
  ports.forEach((p, i) => {
    const pp = index('spec.ports', i);
    const name = strAt(p, 'name');
    if (ports.length > 1 && !name) out.push(required(child(pp, 'name')));
    else if (name) {
      out.push(...messages(child(pp, 'name'), name, dns1123LabelErrors(name)));
      if (names.has(name)) out.push(duplicate(child(pp, 'name'), name));
      names.add(name);
    }
    out.push(...portNum(child(pp, 'port'), p.port));
    out.push(...protocol(child(pp, 'protocol'), p.protocol));
    out.push(...portNumOrName(child(pp, 'targetPort'), p.targetPort));
    const app = str(p.appProtocol);
    if (app) out.push(...qualifiedName(child(pp, 'appProtocol'), app));
    if (typeof p.nodePort === 'number' && p.nodePort !== 0) {
      if (spec.type === 'ClusterIP') out.push(forbidden(child(pp, 'nodePort'), "may not be used when `type` is 'ClusterIP'"));
      else out.push(...portNum(child(pp, 'nodePort'), p.nodePort));
    }
    const pair = `${String(p.port)}/${String(p.protocol)}`;
    if (pairs.has(pair)) out.push(duplicate(pp, { port: p.port, protocol: p.protocol }));
    pairs.add(pair);
  });
  return out;
}

/** Upstream ValidateService (the rules that do not need IP allocation). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const type = spec.type;
  if (!type) out.push(required('spec.type'));
  else if (typeof type !== 'string' || !SERVICE_TYPES.includes(type)) out.push(coveredByDeclarative(notSupported('spec.type', type, SERVICE_TYPES)));
  out.push(...validatePorts(spec));
  if (type === 'ExternalName') {
    const cname = strAt(spec, 'externalName').replace(/\.$/, '');
    if (!cname) out.push(required('spec.externalName'));
    else out.push(...messages('spec.externalName', cname, dns1123SubdomainErrors(cname)));
    if (strs(spec.clusterIPs).length > 0 || str(spec.clusterIP)) out.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
  } else {
    strs(spec.clusterIPs).forEach((ip, i) => {
      if (ip === 'None' && i === 0) return;
      out.push(...messages(index('spec.clusterIPs', i), ip, ipErrors(ip)));
    });
    const ip0 = strs(spec.clusterIPs)[0];
    if (str(spec.clusterIP) && ip0 !== undefined && spec.clusterIP !== ip0) {
      out.push(invalid('spec.clusterIPs', spec.clusterIPs, 'element [0] must match clusterIP'));
    }
    if (spec.clusterIP === 'None' && (type === 'NodePort' || type === 'LoadBalancer')) {
      out.push(invalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${String(type)} services`));
    }
  }
  out.push(...validateLabels(spec.selector, 'spec.selector'));
  out.push(...oneOf('spec.sessionAffinity', spec.sessionAffinity, AFFINITIES, { required: true }));
  if (spec.sessionAffinity === 'ClientIP') {
    const t = get(spec, 'sessionAffinityConfig', 'clientIP', 'timeoutSeconds');
    if (typeof t !== 'number' || t <= 0 || t > 86400) {
      out.push(invalid('spec.sessionAffinityConfig.clientIP.timeoutSeconds', t ?? null, 'must be greater than 0 and less than 86400'));
    }
  }
  strs(spec.externalIPs).forEach((ip, i) => out.push(...messages(index('spec.externalIPs', i), ip, ipErrors(ip))));
  if (externallyAccessible(spec)) out.push(...oneOf('spec.externalTrafficPolicy', spec.externalTrafficPolicy, TRAFFIC_POLICIES, { required: true }));
  else if (spec.externalTrafficPolicy) out.push(invalid('spec.externalTrafficPolicy', spec.externalTrafficPolicy, 'may only be set for externally-accessible services'));
  out.push(...oneOf('spec.internalTrafficPolicy', spec.internalTrafficPolicy, TRAFFIC_POLICIES));
  return out;
}

/**
 * Upstream's update path: an omitted clusterIP (and node ports of unchanged ports) is taken from the
 * stored service (patchAllocatedValues); the primary cluster IP may then not change unless the
 * service moves to or from ExternalName.
 */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const spec = ensureRec(o, 'spec');
  const oldSpec = rec(old.spec) ?? {};
  const out: Cause[] = [];
  if (spec.type !== 'ExternalName' && oldSpec.type !== 'ExternalName') {
    if (!str(spec.clusterIP) && str(oldSpec.clusterIP)) {
      spec.clusterIP = oldSpec.clusterIP;
      spec.clusterIPs = structuredClone(oldSpec.clusterIPs ?? [oldSpec.clusterIP]);
    }
    const oldPorts = recs(oldSpec.ports);
    for (const p of recs(spec.ports)) {
      if (p.nodePort || (spec.type !== 'NodePort' && spec.type !== 'LoadBalancer')) continue;
      const match = oldPorts.find((q) => q.port === p.port && q.protocol === p.protocol);
      if (match && typeof match.nodePort === 'number') p.nodePort = match.nodePort;
    }
    const n0 = strs(spec.clusterIPs)[0];
    const o0 = strs(oldSpec.clusterIPs)[0];
    if (n0 !== undefined && o0 !== undefined && n0 !== o0) out.push(invalid('spec.clusterIPs[0]', n0, 'may not change once set'));
  }
  return out;
}

function portsCell(o: KObject): string {
  const pieces = recs(get(o, 'spec', 'ports')).map((p) =>
    typeof p.nodePort === 'number' && p.nodePort > 0 ? `${String(p.port)}:${p.nodePort}/${String(p.protocol)}` : `${String(p.port)}/${String(p.protocol)}`,
  );
  return pieces.length ? pieces.join(',') : '<none>';
}

/** Upstream getServiceExternalIP (wide form: load balancer addresses are not clipped). */
function externalIpCell(o: KObject): string {
  const spec = rec(o.spec) ?? {};
  const external = strs(spec.externalIPs);
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = [
        ...new Set(
          recs(get(o, 'status', 'loadBalancer', 'ingress'))
            .map((i) => str(i.ip) || str(i.hostname) || '')
            .filter(Boolean),
        ),
      ].sort();
      const all = [...lb, ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return strAt(spec, 'externalName');
  }
  return '<unknown>';
}

export function serviceColumns(now: Now): TableColumn[] {
  return [
    column('Type', 'string', 'type determines how the Service is exposed.', (o) => strAt(o, 'spec', 'type')),
    column('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is usually assigned randomly.', (o) => strs(get(o, 'spec', 'clusterIPs'))[0] ?? (strAt(o, 'spec', 'clusterIP') || '<none>')),
    column('External-IP', 'string', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.', externalIpCell),
    column('Port(s)', 'string', 'The list of ports that are exposed by this service.', portsCell),
    ageColumn(now),
    column('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.', (o) => formatLabels(get(o, 'spec', 'selector')), 1),
  ];
}

export function makeServiceType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'services',
    singular: 'service',
    kind: 'Service',
    listKind: 'ServiceList',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    schema: serviceSchema,
    hasStatus: true,
    specFields: ['spec'],
    fieldSelectors: {
      'spec.clusterIP': (o) => strAt(o, 'spec', 'clusterIP'),
      'spec.type': (o) => strAt(o, 'spec', 'type'),
    },
    tableColumns: serviceColumns(now),
    defaults,
    validate,
    declarativeCoverage: ['spec.type'],
    validateUpdate,
  };
}

export const serviceType: ResourceType = makeServiceType();
