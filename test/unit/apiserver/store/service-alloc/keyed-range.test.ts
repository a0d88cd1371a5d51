import test from 'ava';
import { parseCidr } from '../../../../../common/cidr';
import { decodeObject } from '../../../../../apiserver/store/watch-cache';
import { KeyedRange } from '../../../../../apiserver/store/service-alloc/keyed-range';
import { nodeCidrRange } from '../../../../../apiserver/store/service-alloc/node-cidrs';
import { nodePortRange, serviceIpRange } from '../../../../../apiserver/store/service-alloc/ranges';
import { openStore } from '../fixture';

test('allocations are stored as objects with metadata, which the watch cache decodes (it follows every key)', async (t) => {
  const f = await openStore();
  const owner = { namespace: 'default', name: 'web', uid: 'u' };
  await new KeyedRange(f.storage, serviceIpRange(parseCidr('10.96.0.0/12'))).allocate('10.96.0.1', owner);
  await new KeyedRange(f.storage, nodePortRange(30000, 32767)).allocate('30000', owner);
  await new KeyedRange(f.storage, nodeCidrRange(parseCidr('10.244.0.0/16'), 24)).allocate('10.244.0.0', { namespace: '', name: 'n1' });
  const items = (await f.storage.list('/svc-allocations/')).items;
  t.is(items.length, 3);
  const decoded = items.map((kv) => decodeObject(kv.value, kv.modRevision));
  t.deepEqual(
    decoded.map((o) => [o.kind, o.metadata.name, (o.spec as any).parentRef.resource]),
    [
      ['NodeCIDR', '10.244.0.0', 'nodes'],
      ['IPAddress', '10.96.0.1', 'services'],
      ['ServiceNodePort', '30000', 'services'],
    ],
  );
  t.deepEqual(await new KeyedRange(f.storage, serviceIpRange(parseCidr('10.96.0.0/12'))).ownerOf('10.96.0.1'), owner);
  await f.close();
});
