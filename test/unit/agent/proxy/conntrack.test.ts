/** Which UDP conntrack entries a sync leaves stale (upstream's conntrack cleanup). */
import test from 'ava';
import { staleUdpFlows } from '../../../../agent/proxy/conntrack';
import { servicePortsOf } from '../../../../agent/proxy/service-ports';
import { service, slice } from './fixtures';

const dns = (extra: Record<string, unknown> = {}) => service('dns', { type: 'NodePort', clusterIP: '10.96.0.53', externalIPs: ['192.0.2.53'], ports: [{ port: 53, protocol: 'UDP', nodePort: 30053 }, { name: 't', port: 53, protocol: 'TCP' }], ...extra });
const ports = (ips: string[]) => servicePortsOf([dns()], [slice('dns-a', 'dns', ips.map((ip) => ({ ip })), [{ port: 5353, protocol: 'UDP' }, { name: 't', port: 5353, protocol: 'TCP' }])], 'n1');

test('a removed UDP endpoint: its flows to every Service IP and to the node port are deleted; TCP endpoints are left to the kernel', (t) => {
  t.deepEqual(staleUdpFlows(ports(['10.244.0.5', '10.244.0.6']), ports(['10.244.0.5'])), [
    ['-p', 'udp', '--orig-dst', '10.96.0.53', '--dst-nat', '10.244.0.6'],
    ['-p', 'udp', '--orig-dst', '192.0.2.53', '--dst-nat', '10.244.0.6'],
    ['-p', 'udp', '--dport', '30053', '--dst-nat', '10.244.0.6'],
  ]);
});

test('a Service that had no endpoints and now has one: the flows to its IPs are deleted; nothing when nothing changed', (t) => {
  t.deepEqual(staleUdpFlows(ports([]), ports(['10.244.0.5'])), [
    ['-p', 'udp', '--orig-dst', '10.96.0.53'],
    ['-p', 'udp', '--orig-dst', '192.0.2.53'],
  ]);
  t.deepEqual(staleUdpFlows(ports(['10.244.0.5']), ports(['10.244.0.5'])), []);
  t.deepEqual(staleUdpFlows([], ports(['10.244.0.5'])), [], 'a Service seen for the first time has no stale flows');
});

test('a deleted Service: its endpoints\' flows go too; IPv6 endpoints select the ipv6 family', (t) => {
  const v6 = servicePortsOf([service('d', { clusterIP: 'fd00::53', ports: [{ port: 53, protocol: 'UDP' }] })], [slice('d-a', 'd', [{ ip: 'fd00:244::5' }], [{ port: 53, protocol: 'UDP' }], { addressType: 'IPv6' })], 'n1');
  t.deepEqual(staleUdpFlows(v6, []), [['-f', 'ipv6', '-p', 'udp', '--orig-dst', 'fd00::53', '--dst-nat', 'fd00:244::5']]);
});
