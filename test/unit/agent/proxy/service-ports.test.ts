/** Reading Services and EndpointSlices into Service ports and their endpoints (upstream's ServicePort / Endpoint). */
import test from 'ava';
import { servicePortsOf, usableEndpoints, DEFAULT_AFFINITY_TIMEOUT_SECONDS } from '../../../../agent/proxy/service-ports';
import { service, slice, web, webPorts } from './fixtures';

test('headless and ExternalName Services get no ports; a Service port defaults to TCP; sorted by namespace, name, port', (t) => {
  const ports = servicePortsOf(
    [
      service('b', { clusterIP: '10.96.0.2', ports: [{ port: 53, protocol: 'UDP', name: 'dns' }, { port: 53, name: 'dns-tcp' }] }),
      service('a', { clusterIP: '10.96.0.1', ports: [{ port: 443 }] }, 'zz'),
      service('headless', { clusterIP: 'None', ports: [{ port: 80 }] }),
      service('ext', { type: 'ExternalName', externalName: 'example.com', clusterIP: '10.96.0.9', ports: [{ port: 80 }] }),
      service('bad-proto', { clusterIP: '10.96.0.3', ports: [{ port: 80, protocol: 'ICMP' }] }),
    ],
    [],
    'n1',
  );
  t.deepEqual(
    ports.map((p) => `${p.namespace}/${p.name}/${p.portName}/${p.protocol}/${p.port}`),
    ['default/b/dns/UDP/53', 'default/b/dns-tcp/TCP/53', 'zz/a//TCP/443'],
  );
});

test('endpoints come from the Service\'s slices for the port of the same name and protocol, first address, de-duplicated and sorted', (t) => {
  const s1 = slice('web-a', 'web', [{ ip: '10.244.0.9', node: 'n1' }, { ip: '10.244.0.5', node: 'n2' }], webPorts);
  const s2 = slice('web-b', 'web', [{ ip: '10.244.0.5', node: 'n2' }], webPorts);
  const otherPort = slice('web-c', 'web', [{ ip: '10.244.0.7' }], [{ name: 'metrics', port: 9090, protocol: 'TCP' }]);
  const otherSvc = slice('api-a', 'api', [{ ip: '10.244.0.8' }], webPorts);
  const fqdn = slice('web-f', 'web', [{ ip: 'example.com' }], webPorts, { addressType: 'FQDN' });
  const [p] = servicePortsOf([web()], [s1, s2, otherPort, otherSvc, fqdn], 'n1');
  t.deepEqual(
    p.endpoints.map((e) => `${e.ip}:${e.port}:${e.local}`),
    ['10.244.0.5:8080:false', '10.244.0.9:8080:true'],
  );
});

test('conditions read as upstream: ready unset is ready, serving unset follows ready, terminating unset is false', (t) => {
  const s = slice('web-a', 'web', [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', ready: false }, { ip: '10.0.0.3', ready: false, serving: true, terminating: true }], webPorts);
  const [p] = servicePortsOf([web()], [s], 'n1');
  t.deepEqual(
    p.endpoints.map((e) => [e.ip, e.ready, e.serving, e.terminating]),
    [
      ['10.0.0.1', true, true, false],
      ['10.0.0.2', false, false, false],
      ['10.0.0.3', false, true, true],
    ],
  );
});

test('node ports and external traffic policy only for NodePort and LoadBalancer; load-balancer IPs join the external IPs', (t) => {
  const np = service('np', { type: 'NodePort', clusterIP: '10.96.0.5', externalTrafficPolicy: 'Local', ports: [{ port: 80, nodePort: 30080 }] });
  const cip = service('cip', { clusterIP: '10.96.0.6', externalTrafficPolicy: 'Local', externalIPs: ['192.0.2.1'], ports: [{ port: 80, nodePort: 30081 }] });
  const lb = service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.7', ports: [{ port: 80, nodePort: 30082 }] }, 'default', { loadBalancer: { ingress: [{ ip: '198.51.100.4' }, { hostname: 'lb.example' }] } });
  const [c, l, n] = servicePortsOf([np, cip, lb], [], 'n1');
  t.like(n, { name: 'np', nodePort: 30080, externalLocal: true });
  t.like(c, { name: 'cip', nodePort: 0, externalLocal: false });
  t.deepEqual(c.externalIPs, ['192.0.2.1']);
  t.like(l, { name: 'lb', nodePort: 30082 });
  t.deepEqual(l.externalIPs, ['198.51.100.4']);
});

test('ClientIP affinity takes its timeout, default 3 hours; internalTrafficPolicy Local is read', (t) => {
  const [a, b, c] = servicePortsOf(
    [
      service('a', { clusterIP: '10.96.0.1', sessionAffinity: 'ClientIP', ports: [{ port: 80 }] }),
      service('b', { clusterIP: '10.96.0.2', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } }, internalTrafficPolicy: 'Local', ports: [{ port: 80 }] }),
      service('c', { clusterIP: '10.96.0.3', sessionAffinity: 'None', ports: [{ port: 80 }] }),
    ],
    [],
    'n1',
  );
  t.is(a.affinityTimeoutSeconds, DEFAULT_AFFINITY_TIMEOUT_SECONDS);
  t.is(b.affinityTimeoutSeconds, 60);
  t.true(b.internalLocal);
  t.is(c.affinityTimeoutSeconds, 0);
  t.false(c.internalLocal);
});

test('dual-stack Services carry both cluster IPs; slices of both families feed the same port', (t) => {
  const svc = service('d', { clusterIP: '10.96.0.4', clusterIPs: ['10.96.0.4', 'fd00:96::4'], ports: [{ port: 80 }] });
  const v4 = slice('d-4', 'd', [{ ip: '10.244.0.4' }], [{ port: 8080 }]);
  const v6 = slice('d-6', 'd', [{ ip: 'fd00:244::4' }], [{ port: 8080 }], { addressType: 'IPv6' });
  const [p] = servicePortsOf([svc], [v4, v6], 'n1');
  t.deepEqual(p.clusterIPs, ['10.96.0.4', 'fd00:96::4']);
  t.deepEqual(p.endpoints.map((e) => e.ip).sort(), ['10.244.0.4', 'fd00:244::4']);
});

test('usable endpoints: the ready ones, else serving-and-terminating ones; a Local policy keeps the node\'s own with the same fallback', (t) => {
  const s = slice(
    'web-a',
    'web',
    [
      { ip: '10.0.0.1', node: 'n2' },
      { ip: '10.0.0.2', node: 'n1', ready: false, serving: true, terminating: true },
      { ip: '10.0.0.3', node: 'n1', ready: false, serving: false, terminating: true },
    ],
    webPorts,
  );
  const [p] = servicePortsOf([web()], [s], 'n1');
  t.deepEqual(usableEndpoints(p, false).map((e) => e.ip), ['10.0.0.1']);
  t.deepEqual(usableEndpoints(p, true).map((e) => e.ip), ['10.0.0.2']);
  const [q] = servicePortsOf([web()], [slice('web-a', 'web', [{ ip: '10.0.0.5', ready: false, serving: true, terminating: true }, { ip: '10.0.0.6', ready: false }], webPorts)], 'n1');
  t.deepEqual(usableEndpoints(q, false).map((e) => e.ip), ['10.0.0.5']);
  t.deepEqual(usableEndpoints(q, true), []);
});
