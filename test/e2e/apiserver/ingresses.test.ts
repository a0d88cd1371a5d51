import test from 'ava';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl, kubectlOk, run } from '../../helpers/real-clients';

// Ingress (networking v1) through a real svc-apiserver and the real kubectl: stored, validated with
// upstream's messages, printed with kubectl's columns, and given the default IngressClass by the
// DefaultIngressClass admission plugin. There is no ingress controller: nothing routes.
const KUBECTL_127 = join(dirname(realpathSync('/usr/bin/kubectl')), 'kubectl.1.27');
let s: RunningApiServer;
let dataDir: string;

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-ingresses-'));
  s = await startApiServer({ dataDir });
});
test.after.always(async () => {
  await s?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const k = (...args: string[]) => kubectlOk(s.kubeconfig, args);
const createJson = (o: unknown) => kubectl(s.kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(o) });

interface Ingress {
  spec: {
    ingressClassName?: string;
    defaultBackend?: unknown;
    rules?: Array<{ host?: string; http: { paths: Array<{ path: string; pathType: string; backend: { service: { name: string; port: Record<string, unknown> } } }> } }>;
    tls?: Array<{ hosts: string[]; secretName: string }>;
  };
}
const getIngress = async (name: string): Promise<Ingress> => JSON.parse(await k('get', 'ingresses.networking.k8s.io', name, '-o', 'json')) as Ingress;

test.serial('kubectl create ingress with a rule and TLS: stored as kubectl built it, printed as NAME CLASS HOSTS ADDRESS PORTS AGE', async (t) => {
  await k('create', 'ingress', 'simple', '--rule=foo.com/bar=svc1:8080,tls=my-cert');
  const ing = await getIngress('simple');
  t.deepEqual(ing.spec.rules, [{ host: 'foo.com', http: { paths: [{ path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } }] } }]);
  t.deepEqual(ing.spec.tls, [{ hosts: ['foo.com'], secretName: 'my-cert' }]);
  t.is(ing.spec.ingressClassName, undefined);
  const out = await k('get', 'ingress');
  t.regex(out, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\n/);
  t.regex(out, /\nsimple\s+<none>\s+foo\.com\s+80, 443\s+\d+s\n/);
  // The status sub-resource is where a controller writes its address; kubectl shows it.
  await k('patch', 'ingress', 'simple', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: '192.0.2.50' }] } } }));
  t.regex(await k('get', 'ing', 'simple'), /\nsimple\s+<none>\s+foo\.com\s+192\.0\.2\.50\s+80, 443\s+\d+s\n/);
  // A write to the main resource does not change status.
  await k('patch', 'ingress', 'simple', '--type=merge', '-p', JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: '192.0.2.51' }] } } }));
  t.is(await k('get', 'ingress', 'simple', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}'), '192.0.2.50');
});

test.serial('a default IngressClass is set on new Ingresses naming none (kubectl 1.32 and 1.27); a class named is kept', async (t) => {
  const ic = (name: string, isDefault: boolean) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name, annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {} },
    spec: { controller: 'example.com/ingress-controller' },
  });
  for (const c of [ic('other', false), ic('main', true)]) t.is((await createJson(c)).code, 0);
  await k('create', 'ingress', 'defaulted', '--default-backend=svc2:80');
  t.is((await getIngress('defaulted')).spec.ingressClassName, 'main');
  await k('create', 'ingress', 'named', '--class=other', '--rule=bar.com/*=svc3:http');
  const named = await getIngress('named');
  t.is(named.spec.ingressClassName, 'other');
  t.deepEqual(named.spec.rules?.[0]?.http.paths[0], { path: '/', pathType: 'Prefix', backend: { service: { name: 'svc3', port: { name: 'http' } } } });
  const old = await run(KUBECTL_127, ['--kubeconfig', s.kubeconfig, 'create', 'ingress', 'old', '--rule=baz.com/x=svc4:81']);
  t.is(old.code, 0, old.stderr);
  t.is((await getIngress('old')).spec.ingressClassName, 'main');
  const listed = await run(KUBECTL_127, ['--kubeconfig', s.kubeconfig, 'get', 'ingress', 'old', 'defaulted']);
  t.regex(listed.stdout, /\nold\s+main\s+baz\.com\s+80\s+\d+s\n/);
  t.regex(listed.stdout, /\ndefaulted\s+main\s+\*\s+80\s+\d+s\n/);
});

test.serial('invalid Ingresses are refused with upstream\'s messages', async (t) => {
  const bad = (name: string, spec: unknown) => createJson({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name }, spec });
  const backend = { service: { name: 'svc1', port: { number: 80 } } };
  const noPathType = await bad('nopathtype', { rules: [{ host: 'foo.com', http: { paths: [{ path: '/', backend }] } }] });
  t.not(noPathType.code, 0);
  t.regex(noPathType.stderr, /Ingress "nopathtype" is invalid: spec\.rules\[0\]\.http\.paths\[0\]\.pathType: Required value: pathType must be specified/);
  const empty = await bad('empty', {});
  t.regex(empty.stderr, /Ingress "empty" is invalid: spec: Invalid value: \[\]networking\.IngressRule\(nil\): either `defaultBackend` or `rules` must be specified/);
  const ipHost = await bad('iphost', { rules: [{ host: '10.0.0.1', http: { paths: [{ path: '/a', pathType: 'Prefix', backend: { service: { name: 'svc1', port: {} } } }] } }] });
  t.regex(ipHost.stderr, /spec\.rules\[0\]\.host: Invalid value: "10\.0\.0\.1": must be a DNS name, not an IP address/);
  t.regex(ipHost.stderr, /spec\.rules\[0\]\.http\.paths\[0\]\.backend: Required value: port name or number is required/);
  const badClass = await kubectl(s.kubeconfig, ['create', 'ingress', 'badclass', '--class=Bad_Class', '--default-backend=svc1:80']);
  t.regex(badClass.stderr, /Ingress\.networking\.k8s\.io "badclass" is invalid: spec\.ingressClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain must consist of/);
  t.regex(await k('get', 'ingress', '-o', 'name'), /^(?![\s\S]*(nopathtype|empty|iphost|badclass))/);
});
