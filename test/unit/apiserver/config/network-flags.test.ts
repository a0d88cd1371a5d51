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
