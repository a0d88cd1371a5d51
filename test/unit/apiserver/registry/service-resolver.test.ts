/**
 * The Service resolver shared by the aggregator and the webhook clients: ExternalName, a Service's
 * EndpointSlices (ready endpoints, the port mapped by name, the primary family first), and each
 * failure with the availability controller's reason and message and upstream's resolver wording.
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { resolveTarget, type ServiceLookup } from '../../../../apiserver/registry/service-resolver';

const service = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'ns' }, spec });
const slice = (name: string, addressType: string, endpoints: unknown[], ports: unknown[], svc = 'hook'): KObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'ns', labels: { 'kubernetes.io/service-name': svc } },
  addressType,
  endpoints,
  ports,
});

function lookup(svc: KObject | undefined, slices: KObject[] = []): ServiceLookup {
  return {
    service: (ns, name) => Promise.resolve(svc && ns === 'ns' && name === svc.metadata.name ? svc : undefined),
    endpointSlices: (ns, name) => Promise.resolve(slices.filter((s) => s.metadata.namespace === ns && s.metadata.labels?.['kubernetes.io/service-name'] === name)),
  };
}

const ref = { namespace: 'ns', name: 'hook', port: 443 };
const first = () => 0;

test('a ready endpoint of the slices, at the port the service port maps to by name; TLS name <svc>.<ns>.svc', async (t) => {
  const svc = service({ ports: [{ name: 'https', port: 443, targetPort: 8443 }] });
  const slices = [
    slice('a', 'IPv4', [{ addresses: ['10.0.0.1'], conditions: { ready: false } }, { addresses: ['10.0.0.2'], conditions: { ready: true } }], [{ name: 'https', port: 8443, protocol: 'TCP' }]),
  ];
  t.deepEqual(await resolveTarget(ref, lookup(svc, slices), first), { host: '10.0.0.2', port: 8443, servername: 'hook.ns.svc' });
  // No ready condition means ready (discovery/v1).
  const unnamed = service({ ports: [{ port: 443 }] });
  t.deepEqual(await resolveTarget(ref, lookup(unnamed, [slice('b', 'IPv4', [{ addresses: ['127.0.0.1'] }], [{ name: '', port: 9443 }])]), first), { host: '127.0.0.1', port: 9443, servername: 'hook.ns.svc' });
});

test("the primary family's slices come first; FQDN slices and other services' slices are never used", async (t) => {
  const svc = service({ ipFamilies: ['IPv6', 'IPv4'], ports: [{ name: '', port: 443 }] });
  const slices = [
    slice('fqdn', 'FQDN', [{ addresses: ['example.com'] }], [{ name: '', port: 1 }]),
    slice('other', 'IPv6', [{ addresses: ['fd00::9'] }], [{ name: '', port: 2 }], 'other'),
    slice('v4', 'IPv4', [{ addresses: ['10.0.0.1'] }], [{ name: '', port: 3 }]),
    slice('v6', 'IPv6', [{ addresses: ['fd00::1'] }], [{ name: '', port: 4 }]),
  ];
  t.deepEqual(await resolveTarget(ref, lookup(svc, slices), first), { host: 'fd00::1', port: 4, servername: 'hook.ns.svc' });
});

test('an ExternalName Service is its external name at the requested port', async (t) => {
  t.deepEqual(await resolveTarget(ref, lookup(service({ type: 'ExternalName', externalName: 'hooks.example' })), first), { host: 'hooks.example', port: 443, servername: 'hook.ns.svc' });
});

test("failures: the availability controller's reasons and messages, upstream's resolver wording in detail", async (t) => {
  t.deepEqual(await resolveTarget(ref, lookup(undefined)), { reason: 'ServiceNotFound', message: 'service/hook in "ns" is not present', detail: 'service "hook" not found' });
  t.deepEqual(await resolveTarget(ref, lookup(service({ ports: [{ port: 80 }] }))), {
    reason: 'ServiceAccessError',
    message: 'service/hook in "ns" is not listening on port 443',
    detail: 'no service port 443 found for service "hook"',
  });
  const svc = service({ ports: [{ name: 'https', port: 443 }] });
  const missing = { reason: 'MissingEndpoints', message: 'endpoints for service/hook in "ns" have no addresses with port name "https"', detail: 'no endpoints available for service "hook"' };
  t.deepEqual(await resolveTarget(ref, lookup(svc)), missing);
  // Only unready endpoints, or slices without the named port.
  t.deepEqual(await resolveTarget(ref, lookup(svc, [slice('a', 'IPv4', [{ addresses: ['10.0.0.1'], conditions: { ready: false } }], [{ name: 'https', port: 1 }])])), missing);
  t.deepEqual(await resolveTarget(ref, lookup(svc, [slice('a', 'IPv4', [{ addresses: ['10.0.0.1'] }], [{ name: 'http', port: 1 }])])), missing);
});
