import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { addressTypes, desiredGroups, planSlices, type EndpointGroup } from '../../../../../apiserver/controllers/endpoints/endpoint-slices';

function svc(spec: Record<string, unknown>): KObject {
  return { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ipFamilies: ['IPv4'], ...spec } };
}

function pod(name: string, ips: string[], o: { ready?: boolean; deleting?: boolean; ports?: Array<{ name: string; containerPort: number }>; node?: string; hostname?: string } = {}): KObject {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'web' }, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: o.node ?? 'n1', hostname: o.hostname, subdomain: o.hostname ? 'web' : undefined, containers: [{ name: 'c', ports: o.ports ?? [] }] },
    status: { phase: 'Running', podIP: ips[0], podIPs: ips.map((ip) => ({ ip })), conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });
const zones = (node: string) => ({ n1: 'zone-a' })[node as 'n1'];

test('conditions as upstream: ready = serving and not terminating; serving = pod Ready; zone from the node; hostname for the subdomain', (t) => {
  const s = svc({ ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] });
  const groups = desiredGroups(s, [pod('c', ['10.0.0.3'], { deleting: true }), pod('b', ['10.0.0.2'], { ready: false, node: 'n2' }), pod('a', ['10.0.0.1'], { hostname: 'a' })], zones);
  t.deepEqual(groups, [
    {
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'a', targetRef: ref('a'), nodeName: 'n1', zone: 'zone-a' },
        { addresses: ['10.0.0.2'], conditions: { ready: false, serving: false, terminating: false }, targetRef: ref('b'), nodeName: 'n2' },
        { addresses: ['10.0.0.3'], conditions: { ready: false, serving: true, terminating: true }, targetRef: ref('c'), nodeName: 'n1', zone: 'zone-a' },
      ],
    },
  ]);
  const published = desiredGroups(svc({ publishNotReadyAddresses: true }), [pod('b', ['10.0.0.2'], { ready: false })], zones);
  t.deepEqual(published[0].endpoints[0].conditions, { ready: true, serving: false, terminating: false });
});

test('named ports resolve per pod into groups; dual-stack services get a group per family', (t) => {
  const s = svc({ ipFamilies: ['IPv4', 'IPv6'], ports: [{ name: 'http', port: 80, targetPort: 'web' }] });
  const pods = [pod('a', ['10.0.0.1', 'fd00::1'], { ports: [{ name: 'web', containerPort: 8080 }] }), pod('b', ['10.0.0.2'], { ports: [{ name: 'web', containerPort: 9090 }] }), pod('c', ['10.0.0.3'])];
  const groups = desiredGroups(s, pods, zones);
  t.deepEqual(
    groups.map((g) => [g.addressType, g.ports.map((p) => p.port).join(), g.endpoints.map((e) => (e.addresses as string[])[0]).join()]),
    [
      ['IPv4', '8080', '10.0.0.1'],
      ['IPv4', '9090', '10.0.0.2'],
      ['IPv6', '8080', 'fd00::1'],
    ],
  );
  t.deepEqual(addressTypes(svc({ ipFamilies: undefined, clusterIP: 'fd00::10' })), ['IPv6']);
  t.deepEqual(addressTypes(svc({ ipFamilies: undefined })), ['IPv4']);
});

const group = (n: number, from = 0): EndpointGroup => ({
  addressType: 'IPv4',
  ports: [{ name: '', port: 80, protocol: 'TCP' }],
  endpoints: Array.from({ length: n }, (_, i) => ({ addresses: [`10.1.${(from + i) >> 8}.${(from + i) & 255}`], targetRef: { kind: 'Pod', name: `p${from + i}` } })),
});
const existing = (name: string, g: EndpointGroup): KObject => ({ metadata: { name }, addressType: g.addressType, ports: g.ports, endpoints: g.endpoints });

test('packing: at most 100 endpoints a slice; unchanged slices are not rewritten; an added endpoint fills room in one slice', (t) => {
  const g = group(250);
  const first = planSlices([g], [], 'IPv4');
  t.deepEqual(first.create.map((c) => c.endpoints.length), [100, 100, 50]);
  const slices = first.create.map((c, i) => existing(`s${i}`, c));
  t.deepEqual(planSlices([g], slices, 'IPv4'), { create: [], update: [], delete: [] });
  const grown = planSlices([{ ...g, endpoints: [...g.endpoints, ...group(1, 250).endpoints] }], slices, 'IPv4');
  t.deepEqual([grown.create.length, grown.update.map((u) => [u.name, u.content.endpoints.length]), grown.delete], [0, [['s2', 51]], []]);
  // Removing one endpoint rewrites only its slice; new ones go there first.
  const moved = planSlices([{ ...g, endpoints: [...g.endpoints.slice(1), ...group(1, 300).endpoints] }], slices, 'IPv4');
  t.deepEqual(moved.update.map((u) => [u.name, u.content.endpoints.length]), [['s0', 100]]);
});

test('stale slices: another port set or address type is deleted; no endpoints leaves one placeholder', (t) => {
  const old = existing('old', { ...group(3), ports: [{ name: '', port: 81, protocol: 'TCP' }] });
  const plan = planSlices([group(3)], [old], 'IPv4');
  t.deepEqual([plan.create.length, plan.delete], [1, ['old']]);
  const empty = planSlices([], [old], 'IPv4');
  t.deepEqual(empty, { create: [{ addressType: 'IPv4', ports: [], endpoints: [] }], update: [], delete: ['old'] });
  const placeholder = existing('ph', { addressType: 'IPv4', ports: [], endpoints: [] });
  t.deepEqual(planSlices([], [placeholder], 'IPv4'), { create: [], update: [], delete: [] });
  t.deepEqual(planSlices([group(1)], [placeholder], 'IPv4').delete, ['ph']);
});
