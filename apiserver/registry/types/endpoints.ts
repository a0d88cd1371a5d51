import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { ip, messages, nonSpecialIp, portNum, protocol, qualifiedName } from '../common-validation';
import { child, index, required } from '../field-errors';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../../api/name-validation';
import { recs, str, strAt } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, int32, obj, ptr, str as s, strEnum } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 Endpoints. */

const V1 = 'k8s.io.api.core.v1';

const addressSchema = obj(
  `${V1}.EndpointAddress`,
  {
    ip: [1, ptr(s('The IP of this endpoint.'))],
    hostname: [3, s('The hostname of this endpoint.')],
    nodeName: [4, ptr(s('The node hosting this endpoint.'))],
    targetRef: [2, described('Reference to the object providing the endpoint.', objectReferenceSchema)],
  },
  { required: ['ip'], atomic: true },
);

const portSchema = obj(
  `${V1}.EndpointPort`,
  {
    name: [1, s('The name of this port; must match the name of a ServicePort.')],
    port: [2, ptr(int32('The port number of the endpoint.'))],
    protocol: [3, strEnum(['TCP', 'UDP', 'SCTP'], 'The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.')],
    appProtocol: [4, ptr(s('The application protocol for this port.'))],
  },
  { required: ['port'], atomic: true },
);

export const endpointsSchema = withMeta(`${V1}.Endpoints`, {
  subsets: [
    2,
    atomicList(
      obj(`${V1}.EndpointSubset`, {
        addresses: [1, atomicList(addressSchema, 'IP addresses which offer the related ports and are ready.')],
        notReadyAddresses: [2, atomicList(addressSchema, 'IP addresses which offer the related ports but are not ready.')],
        ports: [3, atomicList(portSchema, 'Port numbers available on the related IP addresses.')],
      }),
      'The set of all endpoints, the union of all subsets.',
    ),
  ],
});

/** Upstream SetDefaults_EndpointPort: protocol TCP. */
function defaults(o: KObject): void {
  for (const ss of recs(o.subsets)) for (const p of recs(ss.ports)) if (!p.protocol) p.protocol = 'TCP';
}

function validateAddress(a: Record<string, unknown>, path: string): Cause[] {
  const out = ip(child(path, 'ip'), a.ip);
  const v = strAt(a, 'ip');
  if (out.length === 0) out.push(...nonSpecialIp(child(path, 'ip'), v));
  const hostname = strAt(a, 'hostname');
  if (hostname) out.push(...messages(child(path, 'hostname'), hostname, dns1123LabelErrors(hostname)));
  const node = str(a.nodeName);
  if (node !== undefined) out.push(...messages(child(path, 'nodeName'), node, dns1123SubdomainErrors(node)));
  return out;
}

/** Upstream validateEndpointSubsets. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  recs(o.subsets).forEach((ss, i) => {
    const p = index('subsets', i);
    const addrs = recs(ss.addresses);
    const notReady = recs(ss.notReadyAddresses);
    if (addrs.length === 0 && notReady.length === 0) out.push(required(p, 'must specify `addresses` or `notReadyAddresses`'));
    addrs.forEach((a, j) => out.push(...validateAddress(a, index(child(p, 'addresses'), j))));
    notReady.forEach((a, j) => out.push(...validateAddress(a, index(child(p, 'notReadyAddresses'), j))));
    const ports = recs(ss.ports);
    ports.forEach((port, j) => {
      const pp = index(child(p, 'ports'), j);
      const name = strAt(port, 'name');
      if (ports.length > 1 && !name) out.push(required(child(pp, 'name')));
      else if (name) out.push(...messages(child(pp, 'name'), name, dns1123LabelErrors(name)));
      out.push(...portNum(child(pp, 'port'), port.port));
      out.push(...protocol(child(pp, 'protocol'), port.protocol));
      const app = str(port.appProtocol);
      if (app) out.push(...qualifiedName(child(pp, 'appProtocol'), app));
    });
  });
  return out;
}

/** Upstream formatEndpoints: up to three ip:port pairs, then "+ N more...". */
export function formatEndpoints(o: KObject): string {
  const subsets = recs(o.subsets);
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const list: string[] = [];
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addrs = recs(ss.addresses);
    const ports = recs(ss.ports);
    if (ports.length === 0) {
      count += addrs.length;
      for (const a of addrs) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(strAt(a, 'ip'));
      }
      continue;
    }
    for (const port of ports) {
      count += addrs.length;
      for (const a of addrs) {
        if (list.length === max) {
          more = true;
          break;
        }
        const host = strAt(a, 'ip');
        list.push(`${host.includes(':') ? `[${host}]` : host}:${String(port.port)}`);
      }
    }
  }
  const ret = list.join(',');
  return more ? `${ret} + ${count - max} more...` : ret;
}

export function endpointsColumns(now: Now): TableColumn[] {
  return [column('Endpoints', 'string', 'Endpoints is the list of endpoints.', formatEndpoints), ageColumn(now)];
}

export function makeEndpointsType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'endpoints',
    singular: 'endpoints',
    kind: 'Endpoints',
    listKind: 'EndpointsList',
    namespaced: true,
    shortNames: ['ep'],
    schema: endpointsSchema,
    hasStatus: false,
    specFields: [],
    tableColumns: endpointsColumns(now),
    defaults,
    validate,
  };
}

export const endpointsType: ResourceType = makeEndpointsType();
