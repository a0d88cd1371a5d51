import test from 'ava';
import pino from 'pino';
import type { KObject } from '../../../../../apiserver/api/types';
import { EndpointSliceController, managesSlices, MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../../../../apiserver/controllers/endpoints/endpointslice-controller';
import { StoreInformers } from '../../../../../apiserver/store/list-watch';
import { admin, ctx, openStore, type StoreFixture } from '../../store/fixture';

const log = pino({ level: 'silent' });
const everything = { labelSelector: [], fieldSelector: [] };

async function start() {
  const f = await openStore();
  const ac = new AbortController();
  const types = { services: f.type('services'), pods: f.type('pods'), nodes: f.type('nodes'), endpointSlices: f.type('endpointslices', 'discovery.svc.io') };
  const running = new EndpointSliceController(f.store, types, new StoreInformers(f.store, f.cache, { log }), log).run(ac.signal);
  return { f, types, stop: async () => (ac.abort(), await running, await f.close()) };
}

const slices = async (f: StoreFixture) => (await f.store.list(f.type('endpointslices', 'discovery.svc.io'), 'default', everything)).items;

/** Polls the stored slices until check passes (bounded by tries; the controller runs on the same event loop). */
async function until(f: StoreFixture, check: (s: KObject[]) => boolean, what: string): Promise<KObject[]> {
  for (let i = 0; i < 500; i++) {
    const s = await slices(f);
    if (check(s)) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}: ${JSON.stringify(await slices(f))}`);
}

function pod(name: string, ip: string, ready: boolean): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

const addrs = (s: KObject[]) => s.flatMap((x) => ((x.endpoints ?? []) as Array<{ addresses: string[] }>).map((e) => e.addresses[0])).sort();

test('slices follow a Service and its pods: labels, owner, zone, more than 100 pods, deletion of the Service', async (t) => {
  const { f, types, stop } = await start();
  try {
    await f.store.create(types.nodes, '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } }, admin);
    const svc = await f.store.create(types.services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default', labels: { tier: 'front' } }, spec: { selector: { app: 'web' }, ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } }, admin);
    const placeholder = await until(f, (s) => s.length === 1, 'a placeholder slice');
    t.deepEqual([placeholder[0].addressType, placeholder[0].endpoints ?? [], placeholder[0].ports ?? []], ['IPv4', [], []]);
    for (let i = 1; i <= 120; i++) {
      const p = pod(`p${i}`, `10.1.0.${i}`, i !== 7);
      await f.store.create(types.pods, 'default', p, admin);
      // Status is written through its sub-resource, as the node agent does.
      await f.store.update(types.pods, 'default', p.metadata.name!, (cur) => ({ ...cur!, status: p.status }), ctx({ subresource: 'status' }));
    }
    const full = await until(f, (s) => addrs(s).length === 120, '120 endpoints');
    t.deepEqual(full.map((s) => (s.endpoints as unknown[]).length).sort((a, b) => a - b), [20, 100]);
    for (const s of full) {
      t.true(s.metadata.name!.startsWith('web-'));
      t.deepEqual(s.metadata.labels, { tier: 'front', [SERVICE_NAME_LABEL]: 'web', [MANAGED_BY_LABEL]: MANAGED_BY });
      t.deepEqual(s.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      t.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    }
    const seven = full.flatMap((s) => s.endpoints as Array<Record<string, any>>).find((e) => e.addresses[0] === '10.1.0.7')!;
    t.deepEqual([seven.conditions, seven.nodeName, seven.zone, seven.targetRef.name], [{ ready: false, serving: false, terminating: false }, 'n1', 'zone-a', 'p7']);
    // Removing pods shrinks the slices; the Service's deletion removes them all.
    for (let i = 1; i <= 115; i++) await f.store.delete(types.pods, 'default', `p${i}`, { gracePeriodSeconds: 0 }, admin);
    t.deepEqual(addrs(await until(f, (s) => addrs(s).length === 5, '5 endpoints left')), ['10.1.0.116', '10.1.0.117', '10.1.0.118', '10.1.0.119', '10.1.0.120']);
    await f.store.delete(types.services, 'default', 'web', {}, admin);
    await until(f, (s) => s.length === 0, 'no slices');
    // An ExternalName Service gets none even with a selector (upstream); a later Service shows the controller ran past it.
    await f.store.create(types.services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'db.example.com', selector: { app: 'web' } } }, admin);
    await f.store.create(types.services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web2', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } }, admin);
    const after = await until(f, (s) => s.some((x) => x.metadata.labels?.[SERVICE_NAME_LABEL] === 'web2'), 'the slice of web2');
    t.deepEqual([...new Set(after.map((x) => x.metadata.labels?.[SERVICE_NAME_LABEL]))], ['web2']);
  } finally {
    await stop();
  }
});

test('a cache that has not seen the controller’s own writes stops the sync (no duplicate slice), until it catches up', async (t) => {
  const f = await openStore();
  try {
    const types = { services: f.type('services'), pods: f.type('pods'), nodes: f.type('nodes'), endpointSlices: f.type('endpointslices', 'discovery.svc.io') };
    const c = new EndpointSliceController(f.store, types, new StoreInformers(f.store, f.cache, { log }), log);
    const svc = await f.store.create(types.services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } }, admin);
    await c.sync('default/web', svc, [], [], () => undefined);
    const written = await slices(f);
    t.is(written.length, 1);
    // The informer still shows no slice: syncing from that view would create a second one.
    t.throws(() => c.checkFresh('default/web', []), { message: /cache for default\/web is out of date/ });
    t.notThrows(() => c.checkFresh('default/web', written));
    t.notThrows(() => c.checkFresh('default/web', []));
  } finally {
    await f.close();
  }
});

test('which Services get slices: a selector, and not ExternalName (upstream)', (t) => {
  const svc = (spec: Record<string, unknown>): KObject => ({ metadata: { name: 's', namespace: 'default' }, spec });
  t.true(managesSlices(svc({ selector: { app: 'web' } })));
  t.false(managesSlices(svc({})));
  t.false(managesSlices(svc({ selector: {} })));
  t.false(managesSlices(svc({ type: 'ExternalName', externalName: 'db.example.com', selector: { app: 'web' } })));
});
