import test from 'ava';
import { ApiError } from '../../../../../apiserver/api/errors';
import type { KObject } from '../../../../../apiserver/api/types';
import { parseServiceCidrs } from '../../../../../apiserver/config/network-flags';
import { ObjectStore } from '../../../../../apiserver/store/object-store';
import { AllocatingAdmission } from '../../../../../apiserver/store/service-alloc/allocating-admission';
import { serviceRanges } from '../../../../../apiserver/store/service-alloc/build';
import { ServiceAllocator } from '../../../../../apiserver/store/service-alloc/service-allocator';
import { SERVICE_IPS_PREFIX, NODE_PORTS_PREFIX } from '../../../../../apiserver/store/service-alloc/ranges';
import { admin, openStore, type StoreFixture } from '../fixture';

async function setup(range = '10.96.0.0/12', ports: [number, number] = [30000, 32767]) {
  const f = await openStore();
  const allocator = new ServiceAllocator(serviceRanges(f.storage, parseServiceCidrs(range), ports));
  const store = new ObjectStore(f.storage, f.cache, new AllocatingAdmission({ admit: async () => {} }, allocator), { now: () => new Date(f.clock.now()), rvWaitMs: 2000 });
  return { f, store, allocator, svcType: f.type('services') };
}

function svc(name: string, spec: Record<string, unknown>): KObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ port: 80 }], selector: { app: name }, ...spec } };
}

async function keys(f: StoreFixture, prefix: string): Promise<string[]> {
  return (await f.storage.list(prefix)).items.map((kv) => kv.key.slice(prefix.length));
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

test('a ClusterIP service gets an address of the range (upper band), its family and policy; the key holds it', async (t) => {
  const { f, store, svcType } = await setup();
  const out = await store.create(svcType, 'default', svc('web', {}), admin);
  const spec = out.spec as any;
  t.regex(spec.clusterIP, /^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/);
  t.deepEqual(spec.clusterIPs, [spec.clusterIP]);
  t.deepEqual(spec.ipFamilies, ['IPv4']);
  t.is(spec.ipFamilyPolicy, 'SingleStack');
  t.notRegex(spec.clusterIP, /^10\.96\.0\.\d+$/, 'dynamic addresses avoid the static band (the first 256)');
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), [spec.clusterIP]);
  await f.close();
});

test('a requested cluster IP is honoured, and refused with upstream messages when taken or out of range', async (t) => {
  const { f, store, svcType } = await setup();
  const a = await store.create(svcType, 'default', svc('a', { clusterIP: '10.96.0.5' }), admin);
  t.is((a.spec as any).clusterIP, '10.96.0.5');
  const taken = await refusal(store.create(svcType, 'default', svc('b', { clusterIP: '10.96.0.5' }), admin));
  t.is(taken.code, 422);
  t.is(taken.message, 'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.5"]: failed to allocate IP 10.96.0.5: provided IP is already allocated');
  const outside = await refusal(store.create(svcType, 'default', svc('c', { clusterIP: '10.0.0.5' }), admin));
  t.is(
    outside.message,
    'Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
  );
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), ['10.96.0.5']);
  await f.close();
});

test('headless and ExternalName services take no address', async (t) => {
  const { f, store, svcType } = await setup();
  const h = await store.create(svcType, 'default', svc('h', { clusterIP: 'None' }), admin);
  t.deepEqual((h.spec as any).clusterIPs, ['None']);
  t.deepEqual((h.spec as any).ipFamilies, ['IPv4']);
  const e = await store.create(svcType, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'e', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'example.com' } }, admin);
  t.is((e.spec as any).clusterIP, undefined);
  t.is((e.spec as any).ipFamilies, undefined);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), []);
  await f.close();
});

test('NodePort services get node ports in range; a requested one is honoured or refused; TCP and UDP may share one', async (t) => {
  const { f, store, svcType } = await setup();
  const np = await store.create(svcType, 'default', svc('np', { type: 'NodePort' }), admin);
  const port = (np.spec as any).ports[0].nodePort as number;
  t.true(port >= 30000 + 86 && port <= 32767, `dynamic port ${port} above the static band`);
  const given = await store.create(
    svcType,
    'default',
    svc('dns', { type: 'NodePort', ports: [{ name: 'tcp', port: 53, protocol: 'TCP', nodePort: 30053 }, { name: 'udp', port: 53, protocol: 'UDP', nodePort: 30053 }] }),
    admin,
  );
  t.deepEqual((given.spec as any).ports.map((p: any) => p.nodePort), [30053, 30053]);
  const taken = await refusal(store.create(svcType, 'default', svc('x', { type: 'NodePort', ports: [{ port: 80, nodePort: 30053 }] }), admin));
  t.is(taken.message, 'Service "x" is invalid: spec.ports[0].nodePort: Invalid value: 30053: provided port is already allocated');
  const outside = await refusal(store.create(svcType, 'default', svc('y', { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] }), admin));
  t.is(outside.message, 'Service "y" is invalid: spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767');
  t.deepEqual((await keys(f, NODE_PORTS_PREFIX)).sort(), ['30053', String(port)].sort());
  await f.close();
});

test('what a refused write took is given back (validation fails after allocation)', async (t) => {
  const { f, store, svcType } = await setup();
  // Two ports without names: the type's validation refuses it after the address and ports were taken.
  const bad = svc('bad', { type: 'NodePort', ports: [{ port: 80 }, { port: 81 }] });
  const err = await refusal(store.create(svcType, 'default', bad, admin));
  t.is(err.code, 422);
  t.deepEqual(await keys(f, SERVICE_IPS_PREFIX), []);
  t.deepEqual(await keys(f, NODE_PORTS_PREFIX), []);
  await f.close();
});

test('a full range is a 500 with upstream message; allocations seen by a new allocator over the same store (restart)', async (t) => {
  const { f, store, svcType } = await setup('10.0.0.0/29');
  const ips = new Set<string>();
  for (let i = 0; i < 6; i++) ips.add(((await store.create(svcType, 'default', svc(`s${i}`, {}), admin)).spec as any).clusterIP as string);
  t.is(ips.size, 6);
  t.false(ips.has('10.0.0.0') || ips.has('10.0.0.7'), 'network and broadcast addresses are never handed out');
  const full = await refusal(store.create(svcType, 'default', svc('s6', {}), admin));
  t.is(full.code, 500);
  t.is(full.message, 'Internal error occurred: failed to allocate a serviceIP: range is full');
  const again = new ServiceAllocator(serviceRanges(f.storage, parseServiceCidrs('10.0.0.0/29'), [30000, 32767]));
  const store2 = new ObjectStore(f.storage, f.cache, new AllocatingAdmission({ admit: async () => {} }, again), { now: () => new Date(), rvWaitMs: 2000 });
  const taken = await refusal(store2.create(svcType, 'default', svc('t', { clusterIP: [...ips][0] }), admin));
  t.regex(taken.message, /provided IP is already allocated/);
  await f.close();
});

test('dual-stack: PreferDualStack gets one address per family, ipFamilies chooses the primary, and single-stack clusters refuse RequireDualStack', async (t) => {
  const { f, store, svcType } = await setup('10.96.0.0/16,fd00:10:96::/108');
  const both = await store.create(svcType, 'default', svc('both', { ipFamilyPolicy: 'PreferDualStack' }), admin);
  const s = both.spec as any;
  t.deepEqual(s.ipFamilies, ['IPv4', 'IPv6']);
  t.is(s.clusterIPs.length, 2);
  t.regex(s.clusterIPs[1], /^fd00:10:96::/);
  const v6 = await store.create(svcType, 'default', svc('v6', { ipFamilies: ['IPv6'] }), admin);
  t.deepEqual((v6.spec as any).ipFamilies, ['IPv6']);
  t.is((v6.spec as any).ipFamilyPolicy, 'SingleStack');
  const two = await store.create(svcType, 'default', svc('two', { clusterIPs: ['10.96.0.9', 'fd00:10:96::9'] }), admin);
  t.is((two.spec as any).ipFamilyPolicy, 'RequireDualStack');
  const single = await setup();
  const err = await refusal(single.store.create(single.svcType, 'default', svc('r', { ipFamilyPolicy: 'RequireDualStack' }), admin));
  t.is(err.message, 'Service "r" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
  const fam = await refusal(single.store.create(single.svcType, 'default', svc('f', { ipFamilies: ['IPv6'] }), admin));
  t.is(fam.message, 'Service "f" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster');
  await single.f.close();
  await f.close();
});

test('updates keep the allocated values; NodePort to ClusterIP drops the node ports', async (t) => {
  const { f, store, svcType } = await setup();
  const np = await store.create(svcType, 'default', svc('np', { type: 'NodePort' }), admin);
  const ip = (np.spec as any).clusterIP;
  const { object: kept } = await store.update(svcType, 'default', 'np', (cur) => ({ ...cur!, spec: { ports: [{ port: 80 }], type: 'NodePort', selector: { app: 'np' } } }), admin);
  t.is((kept.spec as any).clusterIP, ip);
  t.is((kept.spec as any).ports[0].nodePort, (np.spec as any).ports[0].nodePort);
  const { object: plain } = await store.update(svcType, 'default', 'np', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), type: 'ClusterIP' } }), admin);
  t.is((plain.spec as any).ports[0].nodePort, undefined);
  t.is((plain.spec as any).clusterIP, ip);
  await f.close();
});
