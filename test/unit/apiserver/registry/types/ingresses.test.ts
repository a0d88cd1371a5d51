import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeIngressType } from '../../../../../apiserver/registry/types/ingresses';
import { ago, cells, fields, now } from './fixtures';

const type = makeIngressType(now);
const svc = (name: string, port: Record<string, unknown>) => ({ service: { name, port } });
const path = (p: Record<string, unknown>) => ({ path: '/bar', pathType: 'Exact', backend: svc('svc1', { number: 8080 }), ...p });
const rule = (host: string | undefined, paths: unknown[]) => ({ ...(host === undefined ? {} : { host }), http: { paths } });
const ing = (spec: Record<string, unknown>, annotations?: Record<string, string>): KObject => ({ metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(60_000), annotations }, spec });
const errs = (o: KObject, old?: KObject, sub?: string) => type.validate!(o, old, sub).map((c) => [c.field, c.message]);

test('ingress: what kubectl create ingress makes is valid; columns as kubectl prints them', (t) => {
  const o = ing({ rules: [rule('foo.com', [path({})])], tls: [{ hosts: ['foo.com'], secretName: 'my-cert' }] });
  t.deepEqual(errs(o), []);
  t.deepEqual(cells(type, o), { Class: '<none>', Hosts: 'foo.com', Address: '', Ports: '80, 443', Age: '60s' });
  const lb = { ...ing({ ingressClassName: 'nginx', defaultBackend: svc('s', { name: 'http' }) }), status: { loadBalancer: { ingress: [{ ip: '10.0.0.2' }, { hostname: 'lb.example' }, { ip: '10.0.0.1' }, { ip: '10.0.0.2' }] } } };
  t.deepEqual(cells(type, lb), { Class: 'nginx', Hosts: '*', Address: '10.0.0.1,10.0.0.2,lb.example', Ports: '80', Age: '60s' });
  // Upstream formatHosts: three hosts, then "+ N more..." counting the rules beyond three.
  const many = ing({ rules: ['a.com', '', 'b.com', 'c.com', 'd.com'].map((h) => rule(h, [path({})])) });
  t.is(cells(type, many).Hosts, 'a.com,b.com,c.com + 2 more...');
  t.is(cells(type, ing({ rules: ['a.com', '', 'b.com', 'c.com'].map((h) => rule(h, [path({})])) })).Hosts, 'a.com,b.com,c.com');
  t.true(type.namespaced);
  t.true(type.hasStatus);
  t.deepEqual(type.shortNames, ['ing']);
});

const cases: Array<[string, Record<string, unknown>, Array<[string, string]>]> = [
  ['neither rules nor a default backend', {}, [['spec', 'Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified']]],
  ['empty rules and no default backend', { rules: [] }, [['spec', 'Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified']]],
  ['pathType required', { rules: [rule('foo.com', [path({ pathType: undefined })])] }, [['spec.rules[0].http.paths[0].pathType', 'Required value: pathType must be specified']]],
  ['pathType one of three', { rules: [rule('foo.com', [path({ pathType: 'Regex' })])] }, [['spec.rules[0].http.paths[0].pathType', 'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"']]],
  ['Exact and Prefix paths absolute', { rules: [rule(undefined, [path({ path: 'bar' }), path({ pathType: 'Prefix', path: '' })])] }, [['spec.rules[0].http.paths[0].path', 'Invalid value: "bar": must be an absolute path'], ['spec.rules[0].http.paths[1].path', 'Invalid value: "": must be an absolute path']]],
  ['Exact and Prefix paths without dot segments', { rules: [rule(undefined, [path({ path: '/a//b/..' })])] }, [['spec.rules[0].http.paths[0].path', "Invalid value: \"/a//b/..\": must not contain '//'"], ['spec.rules[0].http.paths[0].path', "Invalid value: \"/a//b/..\": cannot end with '/..'"]]],
  ['ImplementationSpecific: any path, or none, but absolute when given', { rules: [rule(undefined, [path({ pathType: 'ImplementationSpecific', path: '' }), path({ pathType: 'ImplementationSpecific', path: '/a//(.*)' }), path({ pathType: 'ImplementationSpecific', path: 'x' })])] }, [['spec.rules[0].http.paths[2].path', 'Invalid value: "x": must be an absolute path']]],
  ['http needs paths', { rules: [rule('foo.com', [])] }, [['spec.rules[0].http.paths', 'Required value']]],
  ['a backend is a service or a resource', { defaultBackend: {} }, [['spec.defaultBackend', 'Invalid value: "": resource or service backend is required']]],
  ['not both', { defaultBackend: { ...svc('s', { number: 80 }), resource: { kind: 'Bucket', name: 'b' } } }, [['spec.defaultBackend', 'Invalid value: "": cannot set both resource and service backends']]],
  ['a resource backend needs kind and name', { defaultBackend: { resource: { apiGroup: 'Bad_Group', name: 'a/b' } } }, [['spec.defaultBackend.resource.apiGroup', 'Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'], ['spec.defaultBackend.resource.kind', 'Required value: kind is required'], ['spec.defaultBackend.resource.name', "Invalid value: \"a/b\": may not contain '/'"]]],
  ['service name required; a port by name or number', { defaultBackend: svc('', {}) }, [['spec.defaultBackend.service.name', 'Required value'], ['spec.defaultBackend', 'Required value: port name or number is required']]],
  ['not both port name and number', { defaultBackend: svc('s', { name: 'http', number: 80 }) }, [['spec.defaultBackend', 'Invalid value: "": cannot set both port name & port number']]],
  ['port number in range, port name an IANA name', { rules: [rule(undefined, [path({ backend: svc('s', { number: 70000 }) }), path({ backend: svc('s', { name: 'HTTP' }) })])] }, [['spec.rules[0].http.paths[0].backend.service.port.number', 'Invalid value: 70000: must be between 1 and 65535, inclusive'], ['spec.rules[0].http.paths[1].backend.service.port.name', 'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'], ['spec.rules[0].http.paths[1].backend.service.port.name', 'Invalid value: "HTTP": must contain at least one letter (a-z)']]],
  ['service name a DNS-1035 label', { defaultBackend: svc('1svc', { number: 80 }) }, [['spec.defaultBackend.service.name', 'DNS1035']]],
  ['hosts: not an IP', { rules: [rule('10.0.0.1', [path({})])] }, [['spec.rules[0].host', 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address']]],
  ['hosts: one leading wildcard label only', { rules: [rule('*.foo.com', [path({})]), rule('foo.*.com', [path({})]), rule('*', [path({})])] }, [['spec.rules[1].host', 'WILDCARD'], ['spec.rules[2].host', 'WILDCARD']]],
  ['TLS hosts and secret names', { defaultBackend: svc('s', { number: 80 }), tls: [{ hosts: ['*.foo.com', 'Foo.com'], secretName: 'Bad' }, { hosts: ['f*.com'] }] }, [['spec.tls[0].hosts[1]', 'SUBDOMAIN'], ['spec.tls[0].secretName', 'SUBDOMAIN'], ['spec.tls[1].hosts[0]', 'WILDCARD']]],
  ['ingressClassName a DNS subdomain', { ingressClassName: 'Nginx', defaultBackend: svc('s', { number: 80 }) }, [['spec.ingressClassName', 'SUBDOMAIN']]],
];

const WILDCARD = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const SUBDOMAIN = 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters';

for (const [name, spec, want] of cases) {
  test(`ingress validation: ${name}`, (t) => {
    const got = errs(ing(spec));
    t.deepEqual(
      got.map(([f]) => f),
      want.map(([f]) => f),
    );
    want.forEach(([, msg], i) => {
      if (msg === 'WILDCARD') t.true((got[i]?.[1] ?? '').endsWith(`: ${WILDCARD}`), (got[i]?.[1] ?? ''));
      else if (msg === 'DNS1035') t.true((got[i]?.[1] ?? '').startsWith('Invalid value: "1svc": a DNS-1035 label must consist of'), (got[i]?.[1] ?? ''));
      else if (msg === 'SUBDOMAIN') t.true((got[i]?.[1] ?? '').includes(`: ${SUBDOMAIN}`), (got[i]?.[1] ?? ''));
      else t.is(got[i][1], msg);
    });
  });
}

test('ingress: the class annotation may not be set with ingressClassName on create (updates keep what is stored)', (t) => {
  const both = ing({ ingressClassName: 'nginx', defaultBackend: svc('s', { number: 80 }) }, { 'kubernetes.io/ingress.class': 'nginx' });
  t.deepEqual(errs(both), [['annotations.kubernetes.io/ingress.class', 'Invalid value: "nginx": can not be set when the class field is also set']]);
  t.deepEqual(errs(both, both), []);
});

test('ingress update: an invalid secret name or wildcard rule already stored stays allowed, a new one does not', (t) => {
  const badSecret = ing({ defaultBackend: svc('s', { number: 80 }), tls: [{ secretName: 'Bad' }] });
  t.deepEqual(fields(type.validate!(badSecret, ing({ defaultBackend: svc('s', { number: 80 }) }))), ['spec.tls[0].secretName']);
  t.deepEqual(fields(type.validate!(badSecret, badSecret)), []);
  const badWildcard = ing({ rules: [rule('*.foo.com', [path({ pathType: 'Regex' })])] });
  t.deepEqual(fields(type.validate!(badWildcard, ing({ defaultBackend: svc('s', { number: 80 }) }))), ['spec.rules[0].http.paths[0].pathType']);
  t.deepEqual(fields(type.validate!(badWildcard, badWildcard)), []);
});

test('ingress status: load-balancer IPs and hostnames checked as upstream', (t) => {
  const o = { ...ing({}), status: { loadBalancer: { ingress: [{ ip: 'nope' }, { hostname: '10.0.0.1' }, { ip: '10.0.0.1', hostname: 'lb.example' }] } } };
  t.deepEqual(errs(o, o, 'status'), [
    ['status.loadBalancer.ingress[0].ip', 'Invalid value: "nope": must be a valid IP address'],
    ['status.loadBalancer.ingress[1].hostname', 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address'],
  ]);
});
