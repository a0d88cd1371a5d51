import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { endpointSubsets } from '../../../../../apiserver/controllers/endpoints/endpoint-subsets';

function svc(spec: Record<string, unknown>): KObject {
  return { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ipFamilies: ['IPv4'], ...spec } };
}

function pod(name: string, ip: string, o: { ready?: boolean; phase?: string; deleting?: boolean; ports?: Array<{ name: string; containerPort: number }>; node?: string; hostname?: string } = {}): KObject {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'web' }, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: o.node ?? 'n1', hostname: o.hostname, subdomain: o.hostname ? 'web' : undefined, containers: [{ name: 'c', ports: o.ports ?? [] }] },
    status: { phase: o.phase ?? 'Running', podIP: ip || undefined, podIPs: ip ? [{ ip }] : [], conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });

const cases: Array<{ title: string; svc: KObject; pods: KObject[]; want: unknown[] }> = [
  {
    title: 'ready and not-ready pods, numeric target port',
    svc: svc({ ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] }),
    pods: [pod('b', '10.0.0.2', { ready: false }), pod('a', '10.0.0.1')],
    want: [{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: ref('a') }], notReadyAddresses: [{ ip: '10.0.0.2', nodeName: 'n1', targetRef: ref('b') }], ports: [{ port: 8080, protocol: 'TCP' }] }],
  },
  {
    title: 'named target ports resolve per pod; pods lacking the name are left out; subsets repacked by port set',
    svc: svc({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] }),
    pods: [pod('a', '10.0.0.1', { ports: [{ name: 'web', containerPort: 8080 }] }), pod('b', '10.0.0.2', { ports: [{ name: 'web', containerPort: 9090 }] }), pod('c', '10.0.0.3')],
    want: [
      { addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: ref('a') }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
      { addresses: [{ ip: '10.0.0.2', nodeName: 'n1', targetRef: ref('b') }], ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] },
    ],
  },
  {
    title: 'publishNotReadyAddresses lists unready and terminating pods as addresses; finished and address-less pods never',
    svc: svc({ publishNotReadyAddresses: true, ports: [{ port: 80, targetPort: 80, protocol: 'UDP' }] }),
    pods: [pod('a', '10.0.0.1', { ready: false }), pod('d', '10.0.0.4', { deleting: true }), pod('f', '10.0.0.5', { phase: 'Succeeded' }), pod('n', '')],
    want: [{ addresses: [{ ip: '10.0.0.1', nodeName: 'n1', targetRef: ref('a') }, { ip: '10.0.0.4', nodeName: 'n1', targetRef: ref('d') }], ports: [{ port: 80, protocol: 'UDP' }] }],
  },
  {
    title: 'terminating pods are left out without publishNotReadyAddresses; a pod hostname with the service as subdomain is kept',
    svc: svc({ clusterIP: 'None', ports: [] }),
    pods: [pod('d', '10.0.0.4', { deleting: true }), pod('h', '10.0.0.6', { hostname: 'h0' })],
    want: [{ addresses: [{ ip: '10.0.0.6', nodeName: 'n1', hostname: 'h0', targetRef: ref('h') }] }],
  },
];

for (const c of cases) {
  test(`endpoint subsets: ${c.title}`, (t) => {
    t.deepEqual(endpointSubsets(c.svc, c.pods), c.want);
  });
}

test('endpoint subsets: an IPv6 service lists the pods\' IPv6 addresses', (t) => {
  const p = pod('a', '10.0.0.1');
  (p.status as any).podIPs = [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }];
  const out = endpointSubsets(svc({ ipFamilies: ['IPv6'], ports: [{ port: 80, targetPort: 80, protocol: 'TCP' }] }), [p]);
  t.is((out[0].addresses as any)[0].ip, 'fd00::1');
});
