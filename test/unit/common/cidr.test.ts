import test from 'ava';
import fc from 'fast-check';
import { bigToIp, canonicalIp, cidrContains, ipToBig, parseCidr } from '../../../common/cidr';

test('IPv4 and IPv6 addresses convert to numbers and back in canonical form', (t) => {
  t.is(ipToBig('10.96.0.1'), (10n << 24n) | (96n << 16n) | 1n);
  t.is(bigToIp(ipToBig('10.96.0.1')!, 'IPv4'), '10.96.0.1');
  t.is(canonicalIp('FD00:0:0:0:0:0:0:1'), 'fd00::1');
  t.is(canonicalIp('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1'); // RFC 5952: the first of two equal runs
  t.is(canonicalIp('::ffff:1.2.3.4'), '::ffff:102:304');
  t.is(canonicalIp('1:2:3:4:5:6:7:8'), '1:2:3:4:5:6:7:8');
  t.is(canonicalIp('::'), '::');
  t.is(canonicalIp('not-an-ip'), undefined);
});

test('parseCidr clears host bits and sizes the block; contains checks family and bounds', (t) => {
  const c = parseCidr('10.96.3.4/12');
  t.is(c.text, '10.96.0.0/12');
  t.is(c.size, 1n << 20n);
  t.true(cidrContains(c, '10.111.255.255'));
  t.false(cidrContains(c, '10.112.0.0'));
  t.false(cidrContains(c, 'fd00::1'));
  t.is(parseCidr('fd00::5/108').text, 'fd00::/108');
  t.throws(() => parseCidr('10.0.0.0/33'), { message: 'invalid CIDR address: 10.0.0.0/33' });
  t.throws(() => parseCidr('10.0.0.0'), { message: 'invalid CIDR address: 10.0.0.0' });
});

test('every IPv6 number round-trips through its text (property)', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (n) => ipToBig(bigToIp(n, 'IPv6')) === n),
      { numRuns: 500 },
    ),
  );
});
