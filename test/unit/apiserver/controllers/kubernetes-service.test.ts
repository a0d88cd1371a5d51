import test from 'ava';
import pino from 'pino';
import { KubernetesServiceReconciler } from '../../../../apiserver/controllers/kubernetes-service';
import { admin, openStore } from '../store/fixture';

const log = pino({ level: 'silent' });

test('every replica is listed in the kubernetes Endpoints while its lease lives; a stopped one leaves at once, a silent one when its lease expires', async (t) => {
  const f = await openStore();
  let now = Date.parse('2026-01-01T00:00:00Z');
  const types = { services: f.type('services'), endpoints: f.type('endpoints'), leases: f.type('leases', 'coordination.svc.io') };
  const make = (address: string) => new KubernetesServiceReconciler(f.store, types, { address, port: 6443, clusterIP: '10.96.0.1', now: () => new Date(now), log, leaseDurationMs: 15_000 });
  const a = make('192.0.2.1');
  const b = make('192.0.2.2');
  const c = make('192.0.2.3');
  await a.reconcile();
  await b.reconcile();
  await c.reconcile();
  const ips = async () => {
    const ep = await f.store.get(types.endpoints, 'default', 'kubernetes');
    return ((ep.subsets as any[])[0]?.addresses ?? []).map((x: any) => x.ip);
  };
  t.deepEqual(await ips(), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  const svc = await f.store.get(types.services, 'default', 'kubernetes');
  t.is((svc.spec as any).clusterIP, '10.96.0.1');
  t.deepEqual((svc.spec as any).ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }]);
  await b.stop();
  t.deepEqual(await ips(), ['192.0.2.1', '192.0.2.3']);
  now += 46_000; // past 45 s (three renewals of 15 s): c is silent, a renews
  await a.reconcile();
  t.deepEqual(await ips(), ['192.0.2.1']);
  // A changed port is put back.
  await f.store.update(types.services, 'default', 'kubernetes', (cur) => ({ ...cur!, spec: { ...(cur!.spec as object), ports: [{ name: 'https', port: 443, targetPort: 1, protocol: 'TCP' }] } }), admin);
  await a.reconcile();
  t.is(((await f.store.get(types.services, 'default', 'kubernetes')).spec as any).ports[0].targetPort, 6443);
  await f.close();
});
