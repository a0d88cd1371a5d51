import test from 'ava';
import pino from 'pino';
import { parseCidr } from '../../../../common/cidr';
import { NodeIpamController } from '../../../../apiserver/controllers/node-ipam';
import { StoreInformers } from '../../../../apiserver/store/list-watch';
import { KeyedRange } from '../../../../apiserver/store/service-alloc/keyed-range';
import { NODE_CIDRS_PREFIX, nodeCidrRange } from '../../../../apiserver/store/service-alloc/node-cidrs';
import { admin, openStore } from '../store/fixture';

const log = pino({ level: 'silent' });

test('node subnets: the /24 blocks of a /16 in order, names their network addresses', (t) => {
  const r = nodeCidrRange(parseCidr('10.244.0.0/16'), 24);
  t.is(r.count, 256);
  t.is(r.nameAt(1), '10.244.1.0');
  t.is(r.offsetOf('10.244.255.0'), 255);
  t.is(r.offsetOf('10.244.1.5'), undefined);
  t.is(r.offsetOf('10.245.0.0'), undefined);
  t.is(r.cidrOf('10.244.3.0'), '10.244.3.0/24');
  const v6 = nodeCidrRange(parseCidr('fd00:244::/56'), 64);
  t.is(v6.nameAt(2), 'fd00:244:0:2::');
  t.throws(() => nodeCidrRange(parseCidr('10.0.0.0/24'), 16), { message: 'node CIDR mask size 16 does not fit in 10.0.0.0/24' });
});

test('node IPAM: each node gets its own subnet (dual-stack: one per family), kept across a new controller, released on delete, never doubled', async (t) => {
  const f = await openStore();
  const nodes = f.type('nodes');
  const pool = (cidr: string, mask: number) => {
    const spec = nodeCidrRange(parseCidr(cidr), mask);
    return { range: new KeyedRange(f.storage, spec, () => 0), cidrOf: spec.cidrOf };
  };
  const make = () => new NodeIpamController(f.store, nodes, [pool('10.244.0.0/22', 24), pool('fd00:244::/62', 64)], new StoreInformers(f.store, f.cache, { log }), { log });
  const c = make();
  const node = async (name: string) => f.store.create(nodes, '', { apiVersion: 'v1', kind: 'Node', metadata: { name } }, admin);
  const cidrs = async (name: string) => (await f.store.get(nodes, '', name)).spec as { podCIDR?: string; podCIDRs?: string[] };
  await c.sync(await node('a'));
  await c.sync(await node('b'));
  t.deepEqual(await cidrs('a'), { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24', 'fd00:244::/64'] });
  t.deepEqual((await cidrs('b')).podCIDRs, ['10.244.1.0/24', 'fd00:244:0:1::/64']);
  // A second controller (another replica, or after a restart) sees the allocations: c gets the next.
  const again = make();
  await again.sync(await f.store.get(nodes, '', 'a')); // already has its CIDRs: nothing changes
  await again.sync(await node('c'));
  t.deepEqual((await cidrs('c')).podCIDRs, ['10.244.2.0/24', 'fd00:244:0:2::/64']);
  const a = await f.store.get(nodes, '', 'a');
  await f.store.delete(nodes, '', 'a', {}, admin);
  await again.release(a);
  await again.sync(await node('d'));
  t.deepEqual((await cidrs('d')).podCIDRs, ['10.244.0.0/24', 'fd00:244::/64'], 'the deleted node\'s subnets are free again');
  await again.sync(await node('e'));
  await t.throwsAsync(again.sync(await node('f')), { message: 'node CIDR range 10.244.0.0/22 is full' });
  t.is((await cidrs('f'))?.podCIDR, undefined, 'four /24 in a /22: the fifth node waits (retried by the queue)');
  t.is((await f.storage.list(NODE_CIDRS_PREFIX)).items.length, 8);
  await f.close();
});
