import test from 'ava';
import { FlagError, parseFlags } from '../../../../apiserver/config/flags';

test('service ranges: upstream defaults, dual-stack pairs, and bad values refused naming the flag', (t) => {
  const d = parseFlags([]).network;
  t.deepEqual(d.serviceCidrs.map((c) => c.text), ['10.96.0.0/12']);
  t.deepEqual(d.nodePortRange, [30000, 32767]);
  t.is(d.advertiseAddress, undefined);
  const dual = parseFlags(['--service-cluster-ip-range=fd00:10:96::/108,10.100.0.0/16', '--service-node-port-range=31000+99', '--advertise-address=192.0.2.7']).network;
  t.deepEqual(dual.serviceCidrs.map((c) => [c.family, c.text]), [['IPv6', 'fd00:10:96::/108'], ['IPv4', '10.100.0.0/16']]);
  t.deepEqual(dual.nodePortRange, [31000, 31099]);
  t.is(dual.advertiseAddress, '192.0.2.7');
  t.throws(() => parseFlags(['--service-cluster-ip-range=10.0.0.0/16,10.1.0.0/16']), { instanceOf: FlagError, message: 'invalid argument "10.0.0.0/16,10.1.0.0/16" for --service-cluster-ip-range: a dual-stack range needs one IPv4 and one IPv6 CIDR' });
  t.throws(() => parseFlags(['--service-cluster-ip-range=10.0.0.0/4']), { instanceOf: FlagError, message: /too large/ });
  t.throws(() => parseFlags(['--service-node-port-range=32767-30000']), { instanceOf: FlagError, message: /--service-node-port-range/ });
  t.throws(() => parseFlags(['--advertise-address=127.0.0.1']), { instanceOf: FlagError, message: 'invalid argument "127.0.0.1" for --advertise-address: may not be a loopback address' });
});

test('node IPAM flags: off without --cluster-cidr; mask sizes per family; a cluster CIDR smaller than a node subnet refused', (t) => {
  const d = parseFlags([]).network;
  t.deepEqual(d.clusterCidrs, []);
  t.deepEqual(d.nodeCidrMaskSize, { IPv4: 24, IPv6: 64 });
  const on = parseFlags(['--cluster-cidr=10.244.0.0/16,fd00:244::/56', '--node-cidr-mask-size=26']).network;
  t.deepEqual(on.clusterCidrs.map((c) => c.text), ['10.244.0.0/16', 'fd00:244::/56']);
  t.is(on.nodeCidrMaskSize.IPv4, 26);
  t.throws(() => parseFlags(['--cluster-cidr=10.244.0.0/25']), { instanceOf: FlagError, message: 'invalid argument "10.244.0.0/25" for --cluster-cidr: 10.244.0.0/25 is smaller than a node\'s /24' });
  t.throws(() => parseFlags(['--node-cidr-mask-size=40']), { instanceOf: FlagError, message: /--node-cidr-mask-size: must be a prefix length of at most 32/ });
});
