import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeEndpointSliceType } from '../../../../../apiserver/registry/types/endpointslices';
import { ago, cells, fields, now } from './fixtures';

const type = makeEndpointSliceType(now);
const slice = (o: Partial<KObject> = {}): KObject => ({
  metadata: { name: 'web-abc', namespace: 'default', creationTimestamp: ago(60_000) },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  ...o,
});

test('endpointslice: a valid slice passes and prints its type, ports and addresses', (t) => {
  t.deepEqual(type.validate!(slice()), []);
  t.deepEqual(cells(type, slice()), { AddressType: 'IPv4', Ports: '80', Endpoints: '10.244.0.5', Age: '60s' });
  const many = slice({ endpoints: [1, 2, 3, 4, 5].map((i) => ({ addresses: [`10.0.0.${i}`] })), ports: [] });
  t.deepEqual(cells(type, many), { AddressType: 'IPv4', Ports: '<unset>', Endpoints: '10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...', Age: '60s' });
  t.is(type.group, 'discovery.svc.io');
});

test('endpointslice: defaults port protocol TCP and name empty (upstream SetDefaults_EndpointPort); v1 writes drop deprecatedTopology', (t) => {
  const o = slice({ ports: [{ port: 53 }], endpoints: [{ addresses: ['10.0.0.1'], deprecatedTopology: { 'kubernetes.io/hostname': 'n1' } }] });
  type.defaults!(o);
  t.deepEqual(o.ports, [{ port: 53, protocol: 'TCP', name: '' }]);
  t.deepEqual(o.endpoints, [{ addresses: ['10.0.0.1'] }]);
});

test('endpointslice: addressType required, supported and immutable', (t) => {
  t.deepEqual(fields(type.validate!(slice({ addressType: undefined }))), ['addressType']);
  t.deepEqual(type.validate!(slice({ addressType: 'IPX' })).map((c) => c.message), ['Unsupported value: "IPX": supported values: "IPv4", "IPv6", "FQDN"']);
  t.deepEqual(type.validateUpdate!(slice({ addressType: 'IPv6', endpoints: [] }), slice()).map((c) => [c.field, c.message]), [['addressType', 'Invalid value: "IPv6": field is immutable']]);
  t.deepEqual(type.validateUpdate!(slice(), slice()), []);
});

test('endpointslice: addresses must match the address type', (t) => {
  t.deepEqual(fields(type.validate!(slice({ endpoints: [{ addresses: ['fd00::1'] }, { addresses: [] }, { addresses: ['127.0.0.1'] }] }))), [
    'endpoints[0].addresses[0]',
    'endpoints[1].addresses',
    'endpoints[2].addresses[0]',
  ]);
  t.deepEqual(type.validate!(slice({ addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'] }] })), []);
  t.deepEqual(type.validate!(slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com'] }] })), []);
  t.deepEqual(fields(type.validate!(slice({ addressType: 'FQDN', endpoints: [{ addresses: ['Not_A_Name'] }] }))), ['endpoints[0].addresses[0]']);
  t.deepEqual(fields(type.validate!(slice({ endpoints: [{ addresses: ['10.0.0.1'], hostname: 'A_B', nodeName: 'bad name' }] }))), ['endpoints[0].hostname', 'endpoints[0].nodeName']);
  const hints = { forZones: [{ name: 'a' }, { name: 'a' }, { name: 'bad zone' }] };
  t.deepEqual(fields(type.validate!(slice({ endpoints: [{ addresses: ['10.0.0.1'], deprecatedTopology: { 'bad key!': 'v' }, hints }] }))), [
    'endpoints[0].deprecatedTopology',
    'endpoints[0].hints.forZones[1].name',
    'endpoints[0].hints.forZones[2].name',
  ]);
});

test('endpointslice: at most 1000 endpoints and 100 ports; port names unique', (t) => {
  const endpoints = Array.from({ length: 1001 }, (_, i) => ({ addresses: [`10.${1 + (i >> 8)}.0.${(i & 255) || 1}`] }));
  t.deepEqual(type.validate!(slice({ endpoints })).map((c) => [c.field, c.message]), [['endpoints', 'Too many: 1001: must have at most 1000 items']]);
  t.deepEqual(type.validate!(slice({ endpoints: endpoints.slice(0, 1000) })), []);
  const ports = Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i, protocol: 'TCP' }));
  t.deepEqual(fields(type.validate!(slice({ ports }))), ['ports']);
  const dup = [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'http', port: 81, protocol: 'TCP' }, { name: 'x', port: 0, protocol: 'ICMP' }];
  t.deepEqual(fields(type.validate!(slice({ ports: dup }))), ['ports[1].name', 'ports[2].port', 'ports[2].protocol']);
});
