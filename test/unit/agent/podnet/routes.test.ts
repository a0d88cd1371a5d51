import test from 'ava';
import fc from 'fast-check';
import type { KObject } from '../../../../apiserver/api/types';
import { nodePodCIDRs, routesToNode, sameRoutes } from '../../../../agent/podnet/routes';

const node = (name: string, podCIDRs: string[] | undefined, ips: string[], extra: Partial<KObject['metadata']> = {}): KObject => ({
  metadata: { name, ...extra },
  spec: podCIDRs ? { podCIDR: podCIDRs[0], podCIDRs } : {},
  status: { addresses: [{ type: 'Hostname', address: name }, ...ips.map((address) => ({ type: 'InternalIP', address }))] },
});
const self = { name: 'a', ips: ['192.0.2.1'] };

test('another node with a podCIDR and an InternalIP gets a route through that address', (t) => {
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24'], ['192.0.2.2']), self), [{ dst: '10.244.1.0/24', via: '192.0.2.2' }]);
});

test('no route to ourselves, to nodes without a podCIDR or an InternalIP, through our own address, or to a node being deleted', (t) => {
  t.deepEqual(routesToNode(node('a', ['10.244.0.0/24'], ['192.0.2.1']), self), []);
  t.deepEqual(routesToNode(node('b', undefined, ['192.0.2.2']), self), []);
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24'], []), self), []);
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24'], ['192.0.2.1']), self), [], 'nodes sharing a host share its routes');
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24'], ['192.0.2.2'], { deletionTimestamp: '2026-01-01T00:00:00Z' }), self), []);
});

test('dual stack: each podCIDR goes through the InternalIP of its family; a family without an address gets none', (t) => {
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24', 'fd00:1::/64'], ['fd00::2', '192.0.2.2']), self), [
    { dst: '10.244.1.0/24', via: '192.0.2.2' },
    { dst: 'fd00:1::/64', via: 'fd00::2' },
  ]);
  t.deepEqual(routesToNode(node('b', ['10.244.1.0/24', 'fd00:1::/64'], ['192.0.2.2']), self), [{ dst: '10.244.1.0/24', via: '192.0.2.2' }]);
});

test('spec.podCIDR alone (older writers) counts; podCIDRs wins when both are set', (t) => {
  t.deepEqual(nodePodCIDRs({ metadata: { name: 'b' }, spec: { podCIDR: '10.244.3.0/24' } }), ['10.244.3.0/24']);
  t.deepEqual(nodePodCIDRs({ metadata: { name: 'b' }, spec: { podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.4.0/24'] } }), ['10.244.4.0/24']);
  t.deepEqual(nodePodCIDRs({ metadata: { name: 'b' } }), []);
});

test('property: a route is made for exactly the other nodes that have both a podCIDR and a foreign InternalIP', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 3 }), fc.boolean(), fc.integer({ min: 0, max: 3 }), (name, hasCidr, ipIndex) => {
      const ip = ['192.0.2.1', '192.0.2.2', '192.0.2.3'][ipIndex];
      const routes = routesToNode(node(name, hasCidr ? ['10.244.9.0/24'] : undefined, ip ? [ip] : []), self);
      const expected = name !== 'a' && hasCidr && ip !== undefined && ip !== '192.0.2.1';
      return routes.length === (expected ? 1 : 0) && (!expected || routes[0].via === ip);
    }),
    ),
  );
});

test('route lists compare as sets', (t) => {
  const r1 = { dst: '10.244.1.0/24', via: '192.0.2.2' };
  const r2 = { dst: 'fd00:1::/64', via: 'fd00::2' };
  t.true(sameRoutes([r1, r2], [r2, r1]));
  t.false(sameRoutes([r1], [{ ...r1, via: '192.0.2.3' }]));
  t.false(sameRoutes([r1], []));
});
