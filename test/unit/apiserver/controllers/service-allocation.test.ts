import test from 'ava';
import pino from 'pino';
import type { KObject } from '../../../../apiserver/api/types';
import { parseServiceCidrs } from '../../../../apiserver/config/network-flags';
import { ServiceAllocationController } from '../../../../apiserver/controllers/service-allocation';
import { StoreInformers } from '../../../../apiserver/store/list-watch';
import { serviceRanges } from '../../../../apiserver/store/service-alloc/build';
import { NODE_PORTS_PREFIX, SERVICE_IPS_PREFIX } from '../../../../apiserver/store/service-alloc/ranges';
import { openStore, type StoreFixture } from '../store/fixture';

const log = pino({ level: 'silent' });

async function setup() {
  const f = await openStore();
  const ranges = serviceRanges(f.storage, parseServiceCidrs('10.96.0.0/16'), [30000, 32767]);
  const events: string[] = [];
  const c = new ServiceAllocationController(f.type('services'), ranges, new StoreInformers(f.store, f.cache, { log }), {
    log,
    leakPasses: 3,
    recorder: { event: (ref, _type, reason) => events.push(`${ref.name}:${reason}`) },
  });
  return { f, ranges, c, events };
}

function svc(name: string, uid: string, spec: Record<string, unknown>): KObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', uid }, spec };
}

async function keys(f: StoreFixture, prefix: string): Promise<string[]> {
  return (await f.storage.list(prefix)).items.map((kv) => kv.key.slice(prefix.length)).sort();
}

test('an update releases what the old object held and the new one does not; a delete releases all', async (t) => {
  const { f, ranges, c } = await setup();
  const owner = { namespace: 'default', name: 'web', uid: 'u1' };
  await ranges.ips[0].range.allocate('10.96.0.10', owner);
  await ranges.nodePorts.allocate('30080', owner);
  const old = svc('web', 'u1', { type: 'NodePort', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, nodePort: 30080 }] });
  const now = svc('web', 'u1', { type: 'ClusterIP', clusterIPs: ['10.96.0.10'], ports: [{ port: 80 }] });
  await c.releaseUnused(old, now);
  t.deepEqual(await keys(f, NODE_PORTS_PREFIX), []);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), ['10.96.0.10']);
  // Another Service's allocation of the same value is never released by this one's delete.
  await ranges.nodePorts.allocate('30080', { namespace: 'default', name: 'other', uid: 'u2' });
  await c.releaseUnused(old, undefined);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), []);
  t.deepEqual(await keys(f, NODE_PORTS_PREFIX), ['30080']);
  await f.close();
});

test('repair: a leak is released only after three passes; a missing allocation is restored; duplicates and out-of-range values are reported', async (t) => {
  const { f, ranges, c, events } = await setup();
  await ranges.ips[0].range.allocate('10.96.0.20', { namespace: 'default', name: 'gone', uid: 'g' });
  const a = svc('a', 'ua', { clusterIPs: ['10.96.0.30'], ports: [{ port: 80 }] });
  const b = svc('b', 'ub', { clusterIPs: ['10.96.0.30'], ports: [{ port: 80 }] });
  const far = svc('far', 'uf', { clusterIPs: ['10.200.0.1'], type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] });
  const first = await c.repair([a, b, far]);
  t.deepEqual(first.restored.sort(), ['10.96.0.30', '31000']);
  t.deepEqual(first.duplicates, ['10.96.0.30']);
  t.deepEqual(first.outOfRange, ['10.200.0.1']);
  t.deepEqual(first.released, []);
  t.deepEqual(events.sort(), ['a:ClusterIPNotAllocated', 'b:ClusterIPAlreadyAllocated', 'far:ClusterIPOutOfRange', 'far:PortNotAllocated'].sort());
  t.deepEqual((await c.repair([a, b, far])).released, []);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), ['10.96.0.20', '10.96.0.30']);
  t.deepEqual((await c.repair([a, b, far])).released, ['10.96.0.20']);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), ['10.96.0.30']);
  await f.close();
});
