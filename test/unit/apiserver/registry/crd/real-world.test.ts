import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KObject } from '../../../../../apiserver/api/types';
import { customResourceTypes } from '../../../../../apiserver/registry/crd/custom-type';
import type { ResourceType } from '../../../../../apiserver/registry/resource-type';
import { checkObject } from '../../../../../apiserver/server/decode';
import { adminCtx, openFixture, type Fixture } from '../../controllers/store-fixture';

// CRDs shaped like three well-known projects' (written for these tests, see the fixtures' headers):
// they install, and their objects validate, prune and default as upstream would.

const dir = join(__dirname, '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'crds', 'real-world');
let f: Fixture;
test.before(async () => {
  f = await openFixture();
});
test.after.always(() => f?.close());

async function install(file: string): Promise<ResourceType> {
  const def = parse(readFileSync(join(dir, file), 'utf8')) as KObject;
  def.apiVersion = 'apiextensions.svc.io/v1';
  const stored = await f.store.create(f.type('apiextensions.svc.io', 'v1', 'customresourcedefinitions'), '', def, adminCtx);
  return customResourceTypes(stored)[0].type;
}

async function refused(t: ResourceType, o: KObject): Promise<string> {
  const err = await f.store.create(t, 'default', o, { ...adminCtx, dryRun: true }).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!err) throw new Error('accepted');
  return err.message;
}

test('cert-manager-like Certificate: required issuerRef, enums, printer columns over conditions', async (t) => {
  const certs = await install('certificates.yaml');
  const cert = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'web', namespace: 'default' }, spec });
  const ok = await f.store.create(certs, 'default', cert({ secretName: 'web-tls', dnsNames: ['web.example.com'], issuerRef: { name: 'ca', kind: 'ClusterIssuer' }, usages: ['server auth'] }), adminCtx);
  t.regex(await refused(certs, cert({ secretName: 'x' })), /spec\.issuerRef: Required value/);
  t.regex(await refused(certs, cert({ secretName: 'x', issuerRef: { name: 'ca' }, privateKey: { algorithm: 'DSA' } })), /spec\.privateKey\.algorithm: Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519"/);
  t.regex(await refused(certs, cert({ secretName: 'x', issuerRef: { name: 'ca' }, usages: ['everything'] })), /spec\.usages\[0\]: Unsupported value: "everything"/);
  const withStatus = { ...ok, status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }] } };
  t.deepEqual(
    certs.tableColumns!.slice(0, 3).map((c) => c.cell(withStatus)),
    ['True', 'web-tls', 'ca'],
  );
});

test('Prometheus-operator-like ServiceMonitor: int-or-string ports, patterns, defaults in lists, pruning', async (t) => {
  const sm = await install('servicemonitors.yaml');
  const mon = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'api', namespace: 'default' }, spec });
  const created = await f.store.create(sm, 'default', mon({ selector: { matchLabels: { app: 'api' } }, endpoints: [{ targetPort: 8080, interval: '30s', relabelings: [{ targetLabel: 'x', sourceLabels: ['__name__'] }] }, { targetPort: 'metrics' }] }), adminCtx);
  t.is((created.spec as { endpoints: Array<{ relabelings?: Array<{ action: string }> }> }).endpoints[0].relabelings![0].action, 'replace');
  t.regex(await refused(sm, mon({ selector: {}, endpoints: [{ interval: '30 seconds' }] })), /spec\.endpoints\[0\]\.interval: Invalid value: "30 seconds": spec\.endpoints\[0\]\.interval in body should match/);
  t.regex(await refused(sm, mon({ selector: {}, endpoints: [{ targetPort: 1.5 }] })), /spec\.endpoints\[0\]\.targetPort: Invalid value: "number": spec\.endpoints\[0\]\.targetPort in body must be of type integer or string: "number"/);
  t.regex(await refused(sm, mon({ endpoints: [] })), /spec\.selector: Required value/);
  const { object, warnings } = checkObject(mon({ selector: {}, unknownField: 1, namespaceSelector: { any: true, extra: 'x' } }), [], sm, 'Warn');
  t.deepEqual(warnings.sort(), ['unknown field "spec.namespaceSelector.extra"', 'unknown field "spec.unknownField"']);
  t.deepEqual(object.spec, { selector: {}, namespaceSelector: { any: true } });
});

test('Argo-Rollouts-like Rollout: a template kept whole, a CEL rule, bounds, scale with a selector path', async (t) => {
  const ro = await install('rollouts.yaml');
  const rollout = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'web', namespace: 'default' }, spec });
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx', anything: { goes: true } }] } };
  const created = await f.store.create(ro, 'default', rollout({ replicas: 3, template, strategy: { canary: { maxSurge: '25%', steps: [{ setWeight: 20 }, { pause: { duration: '1h' } }] } } }), adminCtx);
  t.deepEqual((created.spec as { template: unknown }).template, template);
  t.regex(await refused(ro, rollout({ strategy: { canary: {}, blueGreen: { activeService: 'a' } } })), /spec: Invalid value: "object": only one of canary and blueGreen may be set/);
  t.regex(await refused(ro, rollout({ strategy: { canary: { steps: [{ setWeight: 120 }] } } })), /spec\.strategy\.canary\.steps\[0\]\.setWeight: Invalid value: 120: spec\.strategy\.canary\.steps\[0\]\.setWeight in body should be less than or equal to 100/);
  t.deepEqual(ro.scale, { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.HPAReplicas', labelSelectorPath: '.status.selector' });
});
