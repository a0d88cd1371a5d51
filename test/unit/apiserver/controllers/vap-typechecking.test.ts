/**
 * The ValidatingAdmissionPolicy status controller: the kinds a policy matches (wildcards and
 * sub-resources skipped, at most 10), one warning per expression with errors for some kind, and
 * status.typeChecking and observedGeneration written once per generation.
 */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { expressionWarnings, typesToCheck, ValidatingAdmissionPolicyStatusController } from '../../../../apiserver/controllers/vap-typechecking';
import { adminCtx, openFixture, waitFor } from './store-fixture';

const policy = (rules: unknown[], validations: unknown[], generation = 1): KObject => ({
  apiVersion: 'admissionregistration.svc.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'p', generation },
  spec: { matchConstraints: { resourceRules: rules }, validations },
});
const rule = (apiGroups: string[], apiVersions: string[], resources: string[]) => ({ operations: ['CREATE'], apiGroups, apiVersions, resources });

test('typesToCheck: groups × versions × resources of each rule, known types only, sorted; wildcards and sub-resources skipped', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const lookup = (g: string, v: string, r: string) => f.registry.lookup(g, v, r);
  const kinds = (rules: unknown[]) => typesToCheck(policy(rules, []), lookup).map((x) => x.gvk);
  t.deepEqual(kinds([rule(['apps', ''], ['v1'], ['deployments', 'pods', 'nope', 'pods/status', '*'])]), ['/v1, Kind=Pod', 'apps/v1, Kind=Deployment']);
  t.deepEqual(kinds([rule(['*'], ['v1'], ['pods'])]), []);
  t.deepEqual(kinds([rule(['rbac.authorization.k8s.io'], ['v1'], ['roles'])]), ['rbac.authorization.k8s.io/v1, Kind=Role']);
  const many = ['pods', 'services', 'configmaps', 'secrets', 'endpoints', 'events', 'namespaces', 'nodes', 'serviceaccounts', 'limitranges', 'resourcequotas', 'persistentvolumes'];
  t.is(kinds([rule([''], ['v1'], many)]).length, 10);
});

test('expressionWarnings: per expression and messageExpression, one block per kind with errors', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const p = policy([rule(['apps'], ['v1'], ['deployments', 'replicasets'])], [{ expression: 'object.spec.replicas > 1' }, { expression: 'object.spec.replicass > 1', messageExpression: 'string(object.spec.replicass)' }]);
  const w = expressionWarnings(p, typesToCheck(p, (g, v, r) => f.registry.lookup(g, v, r)), undefined);
  t.deepEqual(w.map((x) => x.fieldRef), ['spec.validations[1].expression', 'spec.validations[1].messageExpression']);
  t.is(w[0].warning, "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n\napps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n");
});

test('the controller writes status.typeChecking and observedGeneration, again when the spec changes', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const vap = f.type('admissionregistration.svc.io', 'v1', 'validatingadmissionpolicies');
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const running = new ValidatingAdmissionPolicyStatusController(f.store, f.cache, f.registry, { log: f.log }).run(ac.signal);
  const spec = { matchConstraints: { resourceRules: [rule(['apps'], ['v1'], ['deployments'])] }, validations: [{ expression: 'object.spec.replicass > 1' }] };
  await f.store.create(vap, '', { apiVersion: 'admissionregistration.svc.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' }, spec }, adminCtx);
  const first = await waitFor(f, vap, '', 'p', (o) => (o?.status as any)?.observedGeneration === 1);
  t.deepEqual((first!.status as any).typeChecking.expressionWarnings.map((w: any) => w.fieldRef), ['spec.validations[0].expression']);
  await f.store.update(vap, '', 'p', (c) => ({ ...c!, spec: { ...spec, validations: [{ expression: 'object.spec.replicas > 1' }] } }), adminCtx);
  const second = await waitFor(f, vap, '', 'p', (o) => (o?.status as any)?.observedGeneration === 2);
  t.deepEqual((second!.status as any).typeChecking, {});
  ac.abort();
  await running;
});
