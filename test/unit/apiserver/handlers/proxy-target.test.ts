import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { isProxyableIP, podAddress, proxyPath, serviceEndpoint, splitSchemeNamePort } from '../../../../apiserver/handlers/proxy-target';

test('ids: name, name:port, scheme:name:port with http or https only', (t) => {
  t.deepEqual(splitSchemeNamePort('web'), { scheme: 'http', name: 'web', port: '' });
  t.deepEqual(splitSchemeNamePort('web:8080'), { scheme: 'http', name: 'web', port: '8080' });
  t.deepEqual(splitSchemeNamePort('web:http-alt'), { scheme: 'http', name: 'web', port: 'http-alt' });
  t.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
  t.deepEqual(splitSchemeNamePort('http:web:'), { scheme: 'http', name: 'web', port: '' });
  for (const bad of ['', ':80', 'ftp:web:21', 'a:b:c:d', 'https::443']) t.is(splitSchemeNamePort(bad), undefined, bad);
});

test('the forwarded path is what follows {resource}/{id}/proxy, still encoded, with the query', (t) => {
  t.is(proxyPath('/api/v1/namespaces/ns/pods/web:8080/proxy/a/b%2Fc?x=1&y=2'), '/a/b%2Fc?x=1&y=2');
  t.is(proxyPath('/api/v1/namespaces/ns/services/https:web:443/proxy'), '/');
  t.is(proxyPath('/api/v1/namespaces/ns/services/web/proxy/?q'), '/?q');
  t.is(proxyPath('/api/v1/nodes/n1/proxy/stats/summary'), '/stats/summary');
  // A suffix that looks like another proxy path is the suffix.
  t.is(proxyPath('/api/v1/namespaces/ns/pods/web/proxy/api/v1/namespaces/x/pods/y/proxy/z'), '/api/v1/namespaces/x/pods/y/proxy/z');
  t.throws(() => proxyPath('/api/v1/namespaces/ns/pods/web/proxyx'), { instanceOf: ApiError });
});

test('proxyable addresses: not loopback, link-local, unspecified or multicast', (t) => {
  for (const ok of ['10.0.0.5', '192.168.1.1', '172.17.0.2', '8.8.8.8', 'fd00::1', '2001:db8::1', '::ffff:10.1.2.3']) t.true(isProxyableIP(ok), ok);
  for (const no of ['127.0.0.1', '127.1.2.3', '0.0.0.0', '169.254.169.254', '224.0.0.1', '::1', '::', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', 'localhost', '']) t.false(isProxyableIP(no), no);
});

const pod = (ip: string | undefined, ports: number[][]): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web' },
  spec: { containers: ports.map((p, i) => ({ name: `c${i}`, ports: p.map((containerPort) => ({ containerPort })) })) },
  status: ip ? { podIP: ip } : {},
});

test("a pod's address: its IP, the port asked for, else its first declared container port", (t) => {
  t.deepEqual(podAddress(pod('10.1.0.4', [[], [8080, 9090]]), ''), { host: '10.1.0.4', port: 8080 });
  t.deepEqual(podAddress(pod('10.1.0.4', [[8080]]), '3000'), { host: '10.1.0.4', port: 3000 });
  t.deepEqual(podAddress(pod('10.1.0.4', []), ''), { host: '10.1.0.4', port: 80 });
  t.throws(() => podAddress(pod(undefined, [[80]]), ''), { message: 'address not allowed' });
  t.throws(() => podAddress(pod('127.0.0.1', [[80]]), ''), { message: 'address not allowed' });
  t.throws(() => podAddress(pod('10.1.0.4', [[80]]), 'http'), { message: /invalid port "http" for pod web/ });
});

const service: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api' }, spec: { ports: [{ name: 'http', port: 80 }, { name: 'metrics', port: 9100 }] } };
const endpoints = (subsets: unknown[]): KObject => ({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'api' }, subsets });

test("a service's endpoint: the service port by number or name, a ready address of a subset with that port; upstream's 503s", (t) => {
  const eps = endpoints([
    { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'http', port: 8080 }] },
    { addresses: [{ ip: '10.0.1.1' }], ports: [{ name: 'metrics', port: 9100 }] },
  ]);
  t.deepEqual(serviceEndpoint(service, eps, '80', 'api:80', () => 1), { host: '10.0.0.2', port: 8080 });
  t.deepEqual(serviceEndpoint(service, eps, 'http', 'api:http', () => 0), { host: '10.0.0.1', port: 8080 });
  t.deepEqual(serviceEndpoint(service, eps, '9100', 'api:9100', () => 0), { host: '10.0.1.1', port: 9100 });
  const err = (f: () => unknown) => t.throws(f, { instanceOf: ApiError });
  let e = err(() => serviceEndpoint(service, eps, '81', 'api:81'));
  t.is(e.message, 'no service port 81 found for service "api"');
  t.is((e).code, 503);
  e = err(() => serviceEndpoint(service, undefined, 'http', 'api:http'));
  t.is(e.message, 'no endpoints available for service "api"');
  t.is((e).code, 503);
  e = err(() => serviceEndpoint(service, endpoints([{ notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'http', port: 8080 }] }]), 'http', 'api:http'));
  t.is(e.message, 'no endpoints available for service "api:http"');
  // An unnamed single service port is the unnamed endpoint port.
  const single: KObject = { ...service, spec: { ports: [{ port: 80 }] } };
  t.deepEqual(serviceEndpoint(single, endpoints([{ addresses: [{ ip: '10.0.0.3' }], ports: [{ port: 8080 }] }]), '', 'api'), { host: '10.0.0.3', port: 8080 });
});

test('property: any chosen endpoint is a ready address of a subset carrying the asked port', (t) => {
  const ip = fc.tuple(fc.integer({ min: 1, max: 126 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 })).map((p) => p.join('.'));
  const subset = fc.record({ addresses: fc.array(fc.record({ ip }), { maxLength: 3 }), ports: fc.array(fc.record({ name: fc.constantFrom('http', 'metrics', ''), port: fc.integer({ min: 1, max: 65535 }) }), { maxLength: 2 }) });
  t.notThrows(() =>
    fc.assert(
    fc.property(fc.array(subset, { maxLength: 4 }), fc.constantFrom('http', 'metrics'), fc.nat(), (subsets, port, seed) => {
      try {
        const got = serviceEndpoint(service, endpoints(subsets), port, `api:${port}`, (n) => seed % n);
        return subsets.some((s) => s.addresses.some((a) => a.ip === got.host) && s.ports.some((p) => p.name === port && p.port === got.port));
      } catch (e) {
        return e instanceof ApiError && e.code === 503 && !subsets.some((s) => s.addresses.length > 0 && s.ports.some((p) => p.name === port));
      }
    }),
    ),
  );
});
