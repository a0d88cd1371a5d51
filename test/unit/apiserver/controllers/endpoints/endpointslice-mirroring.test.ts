import test from 'ava';
import pino from 'pino';
import type { KObject } from '../../../../../apiserver/api/types';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../../../../apiserver/controllers/endpoints/endpointslice-controller';
import { EndpointSliceMirroringController, MIRRORING_MANAGED_BY } from '../../../../../apiserver/controllers/endpoints/endpointslice-mirroring';
import { mirroredGroups } from '../../../../../apiserver/controllers/endpoints/endpoints-mirror';
import { StoreInformers } from '../../../../../apiserver/store/list-watch';
import { admin, openStore, type StoreFixture } from '../../store/fixture';

const log = pino({ level: 'silent' });
const everything = { labelSelector: [], fieldSelector: [] };

test('mirrored content: ready from addresses, not ready from notReadyAddresses, a group per family and port set, non-IPs skipped', (t) => {
  const ep: KObject = {
    metadata: { name: 'ext', namespace: 'default' },
    subsets: [
      { addresses: [{ ip: '10.0.0.2', nodeName: 'n1' }, { ip: 'fd00::1' }, { ip: 'not-an-ip' }], notReadyAddresses: [{ ip: '10.0.0.1', hostname: 'h' }], ports: [{ name: 'https', port: 443, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.3' }], ports: [{ port: 443, name: 'https' }] },
    ],
  };
  t.deepEqual(mirroredGroups(ep), [
    {
      addressType: 'IPv4',
      ports: [{ name: 'https', port: 443, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: false }, hostname: 'h' },
        { addresses: ['10.0.0.2'], conditions: { ready: true }, nodeName: 'n1' },
        { addresses: ['10.0.0.3'], conditions: { ready: true } },
      ],
    },
    { addressType: 'IPv6', ports: [{ name: 'https', port: 443, protocol: 'TCP' }], endpoints: [{ addresses: ['fd00::1'], conditions: { ready: true } }] },
  ]);
});

const slices = async (f: StoreFixture) => (await f.store.list(f.type('endpointslices', 'discovery.svc.io'), 'default', everything)).items;

async function until(f: StoreFixture, check: (s: KObject[]) => boolean, what: string): Promise<KObject[]> {
  for (let i = 0; i < 500; i++) {
    const s = await slices(f);
    if (check(s)) return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}: ${JSON.stringify(await slices(f))}`);
}

test('the Endpoints of a selectorless Service are mirrored, owned by the Endpoints; a selector or the skip-mirror label removes them', async (t) => {
  const f = await openStore();
  const ac = new AbortController();
  const types = { services: f.type('services'), endpoints: f.type('endpoints'), endpointSlices: f.type('endpointslices', 'discovery.svc.io') };
  const running = new EndpointSliceMirroringController(f.store, types, new StoreInformers(f.store, f.cache, { log }), log).run(ac.signal);
  try {
    await f.store.create(types.services, 'default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'default' }, spec: { ports: [{ name: 'https', port: 443 }] } }, admin);
    const ep = await f.store.create(types.endpoints, 'default', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ext', namespace: 'default', labels: { team: 'a' } }, subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }] }, admin);
    const [s] = await until(f, (x) => x.length === 1, 'a mirrored slice');
    t.deepEqual(s.metadata.labels, { team: 'a', [SERVICE_NAME_LABEL]: 'ext', [MANAGED_BY_LABEL]: MIRRORING_MANAGED_BY });
    t.deepEqual(s.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: ep.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    t.deepEqual([s.addressType, s.ports, s.endpoints], ['IPv4', [{ name: 'https', port: 6443, protocol: 'TCP' }], [{ addresses: ['192.0.2.10'], conditions: { ready: true } }]]);
    await f.store.update(types.endpoints, 'default', 'ext', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }), admin);
    await until(f, (x) => x.length === 0, 'slices removed for skip-mirror');
    await f.store.update(types.endpoints, 'default', 'ext', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: {} } }), admin);
    await until(f, (x) => x.length === 1, 'mirrored again');
    await f.store.update(types.services, 'default', 'ext', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), selector: { app: 'x' } } }), admin);
    t.deepEqual(await until(f, (x) => x.length === 0, 'slices removed once the Service selects pods'), []);
  } finally {
    ac.abort();
    await running;
    await f.close();
  }
});
