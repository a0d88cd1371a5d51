import test from 'ava';
import type { NetworkInterfaceInfo } from 'node:os';
import { firstHostIPv4, nodeAddresses } from '../../../../agent/node/addresses';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo =>
  ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null }) as NetworkInterfaceInfo;

const host = () => ({
  lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
  eth0: [iface('fe80::1', 'IPv6'), iface('169.254.3.3', 'IPv4'), iface('192.168.1.20', 'IPv4')],
  eth1: [iface('10.1.1.1', 'IPv4')],
});

test('the first non-loopback, non-link-local IPv4 becomes the InternalIP', (t) => {
  t.is(firstHostIPv4(host), '192.168.1.20');
  t.deepEqual(nodeAddresses('node-a', [], host), [
    { type: 'InternalIP', address: '192.168.1.20' },
    { type: 'Hostname', address: 'node-a' },
  ]);
});

test('--node-ip wins over interface discovery and keeps both families', (t) => {
  t.deepEqual(nodeAddresses('n', ['10.9.9.9', 'fd00::9'], host), [
    { type: 'InternalIP', address: '10.9.9.9' },
    { type: 'InternalIP', address: 'fd00::9' },
    { type: 'Hostname', address: 'n' },
  ]);
});

test('a host with only loopback reports just its hostname', (t) => {
  t.deepEqual(nodeAddresses('n', [], () => ({ lo: [iface('127.0.0.1', 'IPv4', true)] })), [{ type: 'Hostname', address: 'n' }]);
});
