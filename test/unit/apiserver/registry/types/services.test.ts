import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeEndpointsType } from '../../../../../apiserver/registry/types/endpoints';
import { makeServiceType } from '../../../../../apiserver/registry/types/services';
import { ago, cells, fields, now } from './fixtures';

const svcType = makeServiceType(now);
const epType = makeEndpointsType(now);

function svc(spec: Record<string, unknown>): KObject {
  return { metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(25 * 86400_000) }, spec };
}

test('service defaults: ClusterIP, None affinity, TCP, targetPort = port, traffic policies', (t) => {
  const o = svc({ ports: [{ port: 80 }], selector: { app: 'web' } });
  svcType.defaults!(o);
  t.deepEqual(o.spec, {
    ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    selector: { app: 'web' },
    sessionAffinity: 'None',
    type: 'ClusterIP',
    internalTrafficPolicy: 'Cluster',
  });
  const lb = svc({ type: 'LoadBalancer', ports: [{ port: 443, targetPort: 'https' }], sessionAffinity: 'ClientIP' });
  svcType.defaults!(lb);
  const spec = lb.spec as any;
  t.is(spec.externalTrafficPolicy, 'Cluster');
  t.is(spec.allocateLoadBalancerNodePorts, true);
  t.deepEqual(spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
  t.is(spec.ports[0].targetPort, 'https');
  const again = structuredClone(lb);
  svcType.defaults!(again);
  t.deepEqual(again, lb);
  t.deepEqual(svcType.validate!(lb), []);
});

test('service validation: ports required, names, duplicates, protocols, nodePort on ClusterIP', (t) => {
  const none = svc({});
  svcType.defaults!(none);
  t.deepEqual(fields(svcType.validate!(none)), ['spec.ports']);
  const headless = svc({ clusterIP: 'None' });
  svcType.defaults!(headless);
  t.deepEqual(svcType.validate!(headless), []);
  const bad = svc({
    ports: [
      { port: 80, protocol: 'TCP' },
      { name: 'b', port: 80, protocol: 'TCP', nodePort: 30000 },
      { name: 'b', port: 0, protocol: 'ICMP', targetPort: 'Bad_Name' },
    ],
  });
  svcType.defaults!(bad);
  const causes = svcType.validate!(bad);
  t.deepEqual(fields(causes), [
    'spec.ports[0].name',
    'spec.ports[1].nodePort',
    'spec.ports[1]',
    'spec.ports[2].name',
    'spec.ports[2].port',
    'spec.ports[2].protocol',
    'spec.ports[2].targetPort',
  ]);
  t.is(causes[1].message, "Forbidden: may not be used when `type` is 'ClusterIP'");
  t.is(causes[2].message, 'Duplicate value: {"port":80,"protocol":"TCP"}');
  t.is(causes[5].message, 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"');
});

test('service validation: type enum, ExternalName, affinity', (t) => {
  const bad = svc({ type: 'Magic', ports: [{ port: 1 }] });
  svcType.defaults!(bad);
  t.deepEqual(fields(svcType.validate!(bad)), ['spec.type']);
  const ext = svc({ type: 'ExternalName' });
  svcType.defaults!(ext);
  t.deepEqual(fields(svcType.validate!(ext)), ['spec.externalName']);
  (ext.spec as any).externalName = 'db.example.com.';
  t.deepEqual(svcType.validate!(ext), []);
});

test('service update: clusterIP kept when omitted, may not change once set', (t) => {
  const old = svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.10' });
  svcType.defaults!(old);
  const next = svc({ ports: [{ port: 80 }] });
  svcType.defaults!(next);
  t.deepEqual(svcType.validateUpdate!(next, old), []);
  t.is((next.spec as any).clusterIP, '10.96.0.10');
  t.deepEqual((next.spec as any).clusterIPs, ['10.96.0.10']);
  const changed = svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.11' });
  svcType.defaults!(changed);
  t.deepEqual(svcType.validateUpdate!(changed, old).map((c) => [c.field, c.message]), [['spec.clusterIPs[0]', 'Invalid value: "10.96.0.11": may not change once set']]);
});

test('service table cells', (t) => {
  const o = svc({ type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ port: 80, nodePort: 30080 }, { port: 53, protocol: 'UDP' }], selector: { b: '2', a: '1' } });
  svcType.defaults!(o);
  t.deepEqual(cells(svcType, o), {
    Type: 'NodePort',
    'Cluster-IP': '10.96.0.10',
    'External-IP': '<none>',
    'Port(s)': '80:30080/TCP,53/UDP',
    Age: '25d',
    Selector: 'a=1,b=2',
  });
  const lb = svc({ type: 'LoadBalancer', ports: [{ port: 80 }] });
  svcType.defaults!(lb);
  t.is(cells(svcType, lb)['External-IP'], '<pending>');
  t.is(cells(svcType, lb)['Cluster-IP'], '<none>');
  lb.status = { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } };
  t.is(cells(svcType, lb)['External-IP'], '1.2.3.4');
  t.is(svcType.fieldSelectors!['spec.type'](lb), 'LoadBalancer');
  t.is(svcType.fieldSelectors!['spec.clusterIP'](lb), '');
});

test('service schema keys: ports by port+protocol', (t) => {
  t.deepEqual((svcType.schema.properties.spec as any).properties.ports.mapKeys, ['port', 'protocol']);
});

test('endpoints: defaults, validation and the ENDPOINTS cell', (t) => {
  const o: KObject = {
    metadata: { name: 'web', namespace: 'default' },
    subsets: [
      { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { name: 'x', port: 81 }] },
      { addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] },
    ],
  };
  epType.defaults!(o);
  t.is((o.subsets as any)[0].ports[0].protocol, 'TCP');
  const causes = epType.validate!(o);
  t.deepEqual(fields(causes), ['subsets[0].ports[0].name']);
  t.is(cells(epType, o).Endpoints, '10.0.0.1:80,10.0.0.2:80,10.0.0.1:81 + 2 more...');
  const bad: KObject = { metadata: { name: 'x' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }, { ip: 'nope' }] }, {}] };
  t.deepEqual(fields(epType.validate!(bad)), ['subsets[0].addresses[0].ip', 'subsets[0].addresses[1].ip', 'subsets[1]']);
  t.is(cells(epType, { metadata: { name: 'x' } }).Endpoints, '<none>');
  t.is(cells(epType, { metadata: { name: 'x' }, subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 8080 }] }] }).Endpoints, '[fd00::1]:8080');
});
