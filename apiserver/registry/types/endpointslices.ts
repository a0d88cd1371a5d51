import { isIPv4, isIPv6 } from 'node:net';
import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { objectReferenceSchema, withMeta } from '../common-schemas';
import { messages, nonSpecialIp, portNum, protocol, qualifiedName } from '../common-validation';
import { child, duplicate, immutable, index, invalid, notSupported, required, tooMany } from '../field-errors';
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors } from '../../api/name-validation';
import { validateLabels } from '../meta-validation';
import { rec, recs, str, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, bool, described, int32, obj, ptr, setList, str as s, strMap } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** discovery.svc.io/v1 EndpointSlice (upstream discovery.k8s.io/v1; message names and field numbers of its generated.proto). */

const V1 = 'k8s.io.api.discovery.v1';
export const ADDRESS_TYPES: readonly string[] = ['IPv4', 'IPv6', 'FQDN'];
/** Upstream's limits (pkg/apis/discovery/validation). */
const MAX_ENDPOINTS = 1000;
const MAX_PORTS = 100;
const MAX_ADDRESSES = 100;
const MAX_ZONE_HINTS = 8;

const endpointSchema = obj(`${V1}.Endpoint`, {
  addresses: [1, setList(s(), 'Addresses of this endpoint, interpreted per the slice addressType.')],
  conditions: [
    2,
    described(
      'The current status of the endpoint.',
      obj(`${V1}.EndpointConditions`, {
        ready: [1, ptr(bool('The endpoint is prepared to receive traffic.'))],
        serving: [2, ptr(bool('Like ready, but set regardless of the terminating state.'))],
        terminating: [3, ptr(bool('The endpoint is terminating.'))],
      }),
    ),
  ],
  hostname: [3, ptr(s('The hostname of this endpoint.'))],
  targetRef: [4, described('A reference to the object that represents this endpoint.', objectReferenceSchema)],
  deprecatedTopology: [5, strMap('Topology of the v1beta1 API; use nodeName and zone.')],
  nodeName: [6, ptr(s('The name of the Node hosting this endpoint.'))],
  zone: [7, ptr(s('The name of the Zone this endpoint exists in.'))],
  hints: [
    8,
    described(
      'How the endpoint should be consumed.',
      obj(`${V1}.EndpointHints`, {
        forZones: [1, atomicList(obj(`${V1}.ForZone`, { name: [1, s('The name of the zone.')] }), 'The zones this endpoint should be consumed by.')],
      }),
    ),
  ],
});

const portSchema = obj(
  `${V1}.EndpointPort`,
  {
    name: [1, ptr(s('The name of this port, unique in the slice.'))],
    protocol: [2, ptr(s('The IP protocol for this port: TCP, UDP or SCTP. Default is TCP.'))],
    port: [3, ptr(int32('The port number of the endpoint.'))],
    appProtocol: [4, ptr(s('The application protocol for this port.'))],
  },
  { atomic: true },
);

export const endpointSliceSchema = withMeta(
  `${V1}.EndpointSlice`,
  {
    addressType: [4, s('The type of address carried by this slice: IPv4, IPv6 or FQDN.')],
    endpoints: [2, atomicList(endpointSchema, 'The unique endpoints in this slice (at most 1000).')],
    ports: [3, atomicList(portSchema, 'The network ports exposed by each endpoint in this slice (at most 100).')],
  },
  { required: ['addressType', 'endpoints'] },
);

/**
 * Upstream SetDefaults_EndpointPort: protocol TCP, name "". deprecatedTopology is dropped: upstream
 * ignores it on v1 writes (only v1beta1, not served here, could set it), so it is never stored.
 */
function defaults(o: KObject): void {
  for (const e of recs(o.endpoints)) delete e.deprecatedTopology;
  for (const p of recs(o.ports)) {
    if (!p.protocol) p.protocol = 'TCP';
    if (p.name === undefined) p.name = '';
  }
}

/** IsFullyQualifiedDomainName: at least two labels, a DNS subdomain, no trailing dot. */
function fqdnErrors(v: string): string[] {
  if (v.endsWith('.')) return ['must not end with a dot'];
  if (v.split('.').length < 2) return ['should be a domain with at least two segments separated by dots'];
  return dns1123SubdomainErrors(v);
}

function addressErrors(path: string, v: string, type: string): Cause[] {
  if (type === 'IPv4') return isIPv4(v) ? nonSpecialIp(path, v) : [invalid(path, v, 'must be a valid IPv4 address')];
  if (type === 'IPv6') return isIPv6(v) ? nonSpecialIp(path, v) : [invalid(path, v, 'must be a valid IPv6 address')];
  if (type === 'FQDN') return messages(path, v, fqdnErrors(v));
  return [];
}

function validateEndpoint(e: Record<string, unknown>, path: string, type: string): Cause[] {
  const out: Cause[] = [];
  const addrs = strs(e.addresses);
  const ap = child(path, 'addresses');
  if (addrs.length === 0) out.push(required(ap, 'must contain at least 1 address'));
  else if (addrs.length > MAX_ADDRESSES) out.push(tooMany(ap, addrs.length, MAX_ADDRESSES));
  addrs.forEach((a, i) => out.push(...addressErrors(index(ap, i), a, type)));
  const hostname = str(e.hostname);
  if (hostname) out.push(...messages(child(path, 'hostname'), hostname, dns1123LabelErrors(hostname)));
  const node = str(e.nodeName);
  if (node) out.push(...messages(child(path, 'nodeName'), node, dns1123SubdomainErrors(node)));
  if (e.deprecatedTopology) out.push(...validateLabels(e.deprecatedTopology, child(path, 'deprecatedTopology')));
  const zones = recs(rec(e.hints)?.forZones);
  const zp = child(child(path, 'hints'), 'forZones');
  if (zones.length > MAX_ZONE_HINTS) out.push(tooMany(zp, zones.length, MAX_ZONE_HINTS));
  const seenZones = new Set<string>();
  zones.forEach((z, i) => {
    const name = str(z.name) ?? '';
    if (seenZones.has(name)) out.push(duplicate(child(index(zp, i), 'name'), name));
    else out.push(...messages(child(index(zp, i), 'name'), name, labelValueErrors(name)));
    seenZones.add(name);
  });
  return out;
}

function validatePorts(ports: Record<string, unknown>[]): Cause[] {
  const out: Cause[] = [];
  if (ports.length > MAX_PORTS) out.push(tooMany('ports', ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const pp = index('ports', i);
    const name = str(p.name) ?? '';
    if (name) out.push(...messages(child(pp, 'name'), name, dns1123LabelErrors(name)));
    if (names.has(name)) out.push(duplicate(child(pp, 'name'), name));
    names.add(name);
    if (p.port !== undefined && p.port !== null) out.push(...portNum(child(pp, 'port'), p.port));
    out.push(...protocol(child(pp, 'protocol'), p.protocol));
    const app = str(p.appProtocol);
    if (app) out.push(...qualifiedName(child(pp, 'appProtocol'), app));
  });
  return out;
}

/** Upstream ValidateEndpointSlice (addressType required and supported on create; see validateUpdate). */
function validate(o: KObject, old?: KObject): Cause[] {
  const out: Cause[] = [];
  const type = str(o.addressType) ?? '';
  // On update upstream only checks the type is unchanged, so slices of a retired type stay writable.
  if (!old) {
    if (!type) out.push(required('addressType'));
    else if (!ADDRESS_TYPES.includes(type)) out.push(notSupported('addressType', type, ADDRESS_TYPES));
  }
  const endpoints = recs(o.endpoints);
  if (endpoints.length > MAX_ENDPOINTS) out.push(tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((e, i) => out.push(...validateEndpoint(e, index('endpoints', i), type)));
  out.push(...validatePorts(recs(o.ports)));
  return out;
}

/** Upstream ValidateEndpointSliceUpdate: addressType is immutable. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  return o.addressType === old.addressType ? [] : [immutable('addressType', o.addressType ?? null)];
}

/** Up to three entries, then "+ N more..."; "<unset>" when there are none (upstream's printer). */
function listWithMore(list: string[], count: number): string {
  if (count === 0) return '<unset>';
  return count > 3 ? `${list.slice(0, 3).join(',')} + ${count - 3} more...` : list.join(',');
}

export function endpointSliceColumns(now: Now): TableColumn[] {
  return [
    column('AddressType', 'string', 'The type of address carried by this EndpointSlice.', (o) => str(o.addressType) ?? ''),
    column('Ports', 'string', 'The network ports exposed by each endpoint.', (o) => {
      const ports = recs(o.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : str(p.name) || '*'));
      return listWithMore(ports, ports.length);
    }),
    column('Endpoints', 'string', 'The unique endpoints in this slice.', (o) => {
      const addrs = recs(o.endpoints).flatMap((e) => strs(e.addresses));
      return listWithMore(addrs, addrs.length);
    }),
    ageColumn(now),
  ];
}

export function makeEndpointSliceType(now: Now = Date.now): ResourceType {
  return {
    group: 'discovery.svc.io',
    version: 'v1',
    resource: 'endpointslices',
    singular: 'endpointslice',
    kind: 'EndpointSlice',
    listKind: 'EndpointSliceList',
    namespaced: true,
    schema: endpointSliceSchema,
    hasStatus: false,
    tableColumns: endpointSliceColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}
