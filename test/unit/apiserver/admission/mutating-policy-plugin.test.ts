/**
 * MutatingAdmissionPolicy: ApplyConfiguration merged with structured-merge-diff semantics (map
 * lists by key, labels key by key, atomic values refused), JSONPatch with jsonpatch.escapeKey,
 * variables and params, matchConditions, failurePolicy, reinvocation, the feature gate, DELETE
 * and admissionregistration exemption, upstream's refusal wording.
 */
import test from 'ava';
import { AdmissionChain, type AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { atomicPaths } from '../../../../apiserver/admission/mutating-policy-eval';
import { MutatingAdmissionPolicyPlugin } from '../../../../apiserver/admission/mutating-policy-plugin';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

type Rec = Record<string, any>;
const types = makeBuiltinTypes();
const pods = types.find((t) => t.resource === 'pods' && t.group === '')!;
const configMaps = types.find((t) => t.resource === 'configmaps')!;
const mapType = types.find((t) => t.resource === 'mutatingadmissionpolicies' && t.version === 'v1beta1')!;

const pod = (): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'nginx', args: ['-v'] }] },
});

const attrs = (o: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  type: pods,
  namespace: 'ns',
  name: 'web',
  subresource: '',
  object: pod(),
  user: { username: 'alice', groups: [] },
  dryRun: false,
  warnings: [],
  ...o,
});

const rules = [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }];
const apply = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const patch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const policy = (name: string, spec: Rec): KObject => ({ metadata: { name }, spec: { failurePolicy: 'Fail', reinvocationPolicy: 'Never', matchConstraints: { resourceRules: rules, namespaceSelector: {}, objectSelector: {} }, ...spec } });
const binding = (name: string, policyName: string, spec: Rec = {}): KObject => ({ metadata: { name }, spec: { policyName, ...spec } });

function plugin(policies: KObject[], bindings: KObject[], params: KObject[] = [], enabled = true): MutatingAdmissionPolicyPlugin {
  return new MutatingAdmissionPolicyPlugin(
    {
      policies: () => Promise.resolve(policies),
      bindings: () => Promise.resolve(bindings),
      namespace: (name) => Promise.resolve({ metadata: { name, labels: { env: 'prod' } } }),
      paramType: (apiVersion, kind) => (apiVersion === 'v1' && kind === 'ConfigMap' ? configMaps : undefined),
      getParam: (_t, ns, name) => Promise.resolve(params.find((p) => p.metadata.name === name && p.metadata.namespace === ns)),
      listParams: (_t, ns) => Promise.resolve(params.filter((p) => p.metadata.namespace === ns)),
    },
    enabled,
  );
}

const sidecar = policy('sidecar', {
  mutations: [
    apply('Object{metadata: Object.metadata{labels: {"team": "a"}}, spec: Object.spec{containers: [Object.spec.containers{name: "side", image: "busybox"}]}}'),
  ],
});

test('ApplyConfiguration merges: labels key by key, containers by name (a new one appended), the rest kept', async (t) => {
  const a = attrs();
  await plugin([sidecar], [binding('b', 'sidecar')]).mutate(a);
  t.deepEqual(a.object!.metadata.labels, { app: 'web', team: 'a' });
  const containers = (a.object!.spec as Rec).containers as Rec[];
  t.deepEqual(containers.map((c) => [c.name, c.image, c.args]), [['app', 'nginx', ['-v']], ['side', 'busybox', undefined]]);
  t.is(a.object!.kind, 'Pod');
  // The mutated object is defaulted, as upstream's dispatcher does: the added container is valid.
  t.is(containers[1].imagePullPolicy, 'Always');
  t.is(containers[1].terminationMessagePolicy, 'File');
});

test('ApplyConfiguration changes a named container in place and may not set an atomic list', async (t) => {
  const a = attrs();
  await plugin([policy('img', { mutations: [apply('Object{spec: Object.spec{containers: [Object.spec.containers{name: "app", image: "nginx:1.27"}]}}')] })], [binding('b', 'img')]).mutate(a);
  t.deepEqual(((a.object!.spec as Rec).containers as Rec[]).map((c) => [c.name, c.image, c.args]), [['app', 'nginx:1.27', ['-v']]]);
  const atomic = policy('args', { mutations: [apply('Object{spec: Object.spec{containers: [Object.spec.containers{name: "app", args: ["-q"]}]}}')] });
  const err = await t.throwsAsync(plugin([atomic], [binding('b', 'args')]).mutate(attrs()), { instanceOf: ApiError });
  t.is(err.message, "policy 'args' with binding 'b' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.containers[0].args");
  t.is(err.code, 403);
  t.is(err.reason, 'Invalid');
  t.deepEqual(atomicPaths({ metadata: { labels: { a: 'b' } } }, pods.schema), []);
});

test('JSONPatch: operations applied in order, escapeKey for label keys; each mutation sees the previous one', async (t) => {
  const p = policy('jp', {
    variables: [{ name: 'key', expression: '"example.com/owner"' }],
    mutations: [
      patch('[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey(variables.key), value: request.userInfo.username}]'),
      patch('[JSONPatch{op: "add", path: "/metadata/annotations", value: {"seen": object.metadata.labels["example.com/owner"]}}]'),
    ],
  });
  const a = attrs();
  await plugin([p], [binding('b', 'jp')]).mutate(a);
  t.deepEqual(a.object!.metadata.labels, { app: 'web', 'example.com/owner': 'alice' });
  t.deepEqual(a.object!.metadata.annotations, { seen: 'alice' });
});

test('failurePolicy: Fail refuses on a failing patch, Ignore leaves the object; matchConditions filter', async (t) => {
  const bad = (fp: string) => policy('bad', { failurePolicy: fp, mutations: [patch('[JSONPatch{op: "replace", path: "/spec/missing", value: 1}]')] });
  const err = await t.throwsAsync(plugin([bad('Fail')], [binding('b', 'bad')]).mutate(attrs()), { instanceOf: ApiError });
  t.regex(err.message, /^policy 'bad' with binding 'b' denied request: JSON Patch: /);
  const a = attrs();
  await plugin([bad('Ignore')], [binding('b', 'bad')]).mutate(a);
  t.deepEqual(a.object, pod());
  const skipped = policy('skip', { ...(sidecar.spec as Rec), matchConditions: [{ name: 'not-web', expression: 'object.metadata.name != "web"' }] });
  const b = attrs();
  await plugin([skipped], [binding('b', 'skip')]).mutate(b);
  t.deepEqual(b.object, pod());
});

test('params: the ConfigMap named by the binding; a missing one with Deny follows failurePolicy', async (t) => {
  const p = policy('img', { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, mutations: [apply('Object{metadata: Object.metadata{labels: {"tier": params.data.tier}}}')] });
  const cm: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ns' }, data: { tier: 'gold' } };
  const a = attrs();
  await plugin([p], [binding('b', 'img', { paramRef: { name: 'cfg', parameterNotFoundAction: 'Deny' } })], [cm]).mutate(a);
  t.is(a.object!.metadata.labels?.tier, 'gold');
  const err = await t.throwsAsync(plugin([p], [binding('b', 'img', { paramRef: { name: 'none', parameterNotFoundAction: 'Deny' } })], [cm]).mutate(attrs()), { instanceOf: ApiError });
  t.is(err.message, "policy 'img' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
});

test('reinvocation: an IfNeeded policy runs again when a later policy changed the object', async (t) => {
  // "copy" copies label b into c; "set-b" (a later binding) sets b: only a second run of "copy" sees it.
  const copy = (reinvocationPolicy: string) => policy('copy', { reinvocationPolicy, mutations: [apply('Object{metadata: Object.metadata{labels: {"c": "b" in object.metadata.labels ? object.metadata.labels["b"] : "none"}}}')] });
  const setB = policy('set-b', { mutations: [apply('Object{metadata: Object.metadata{labels: {"b": "x"}}}')] });
  // Reinvocation is the chain's second pass (admission/reinvocation.ts), as upstream's reinvoker.
  const once = attrs();
  await new AdmissionChain([plugin([copy('Never'), setB], [binding('1', 'copy'), binding('2', 'set-b')])]).admit(once);
  t.is(once.object!.metadata.labels?.c, 'none');
  const again = attrs();
  await new AdmissionChain([plugin([copy('IfNeeded'), setB], [binding('1', 'copy'), binding('2', 'set-b')])]).admit(again);
  t.is(again.object!.metadata.labels?.c, 'x');
});

test('inactive without the feature gate; DELETE and admissionregistration objects are never mutated', async (t) => {
  const off = attrs();
  await plugin([sidecar], [binding('b', 'sidecar')], [], false).mutate(off);
  t.deepEqual(off.object, pod());
  const del = attrs({ operation: 'DELETE' });
  await plugin([sidecar], [binding('b', 'sidecar')]).mutate(del);
  t.deepEqual(del.object, pod());
  const everything = policy('all', { matchConstraints: { resourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*' }] }, mutations: [apply('Object{metadata: Object.metadata{labels: {"x": "y"}}}')] });
  const own = attrs({ type: mapType, object: { apiVersion: 'admissionregistration.svc.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: { name: 'p' } }, namespace: '' });
  await plugin([everything], [binding('b', 'all')]).mutate(own);
  t.is(own.object!.metadata.labels, undefined);
});

test('validation: upstream\'s messages for mutations, patch types, reinvocationPolicy, DELETE and Object type names', (t) => {
  const msgs = (spec: Rec) => mapType.validate!({ apiVersion: 'admissionregistration.svc.io/v1beta1', kind: 'MutatingAdmissionPolicy', metadata: { name: 'p' }, spec }).map((c) => `${c.field}: ${c.message}`);
  const constraints = { resourceRules: [{ ...rules[0], operations: ['CREATE', 'DELETE'] }] };
  t.deepEqual(msgs({ matchConstraints: constraints }), [
    'spec.matchConstraints.resourceRules[0].operations[1]: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"',
    'spec.mutations: Required value: mutations must contain at least one item',
    'spec.reinvocationPolicy: Required value',
  ]);
  t.deepEqual(
    msgs({ matchConstraints: { resourceRules: rules }, reinvocationPolicy: 'Sometimes', mutations: [{ patchType: 'ApplyConfiguration', jsonPatch: { expression: '[]' } }, apply('Object{spec: Object.wrong{}}'), { patchType: 'Merge' }] }),
    [
      'spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration',
      'spec.mutations[0].jsonPatch: Forbidden: must not be specified when patchType is ApplyConfiguration',
      'spec.mutations[1].applyConfiguration.expression: Invalid value: "Object{spec: Object.wrong{}}": compilation failed: type mismatch: unexpected type name "Object.wrong", expected "Object.spec", which matches field name path from root Object type',
      'spec.mutations[2].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"',
      'spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"',
    ],
  );
});

test("a policy sees a two-name group as its matching rule spells it (\"*\": upstream's k8s.io name); its result is stored canonical", async (t) => {
  const roles = types.find((r) => r.resource === 'roles' && r.version === 'v1')!;
  for (const [groups, expected] of [
    [['*'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.k8s.io'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.svc.io'], 'rbac.authorization.svc.io'],
  ] as const) {
    const seen = policy('seen', {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [...groups], apiVersions: ['v1'], resources: ['roles'], scope: '*' }], namespaceSelector: {}, objectSelector: {} },
      matchConditions: [{ name: 'group', expression: `request.kind.group == "${expected}"` }],
      mutations: [
        apply('Object{metadata: Object.metadata{labels: {"seen": object.apiVersion.split("/")[0], "kind": request.kind.group, "managed": object.metadata.managedFields[0].apiVersion.split("/")[0]}}}'),
        patch('[JSONPatch{op: "add", path: "/metadata/annotations", value: {"request": request.resource.group}}]'),
      ],
    });
    const role: KObject = {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace: 'ns', managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'rbac.authorization.svc.io/v1', fieldsType: 'FieldsV1', fieldsV1: {} }] },
      rules: [],
    };
    const a = attrs({ type: roles, name: 'r', object: role });
    await plugin([seen], [binding('b', 'seen')]).mutate(a);
    t.deepEqual(a.object!.metadata.labels, { seen: expected, kind: expected, managed: expected }, groups.join());
    t.deepEqual(a.object!.metadata.annotations, { request: expected });
    t.is(a.object!.apiVersion, 'rbac.authorization.svc.io/v1');
    t.is((a.object!.metadata.managedFields as Rec[])[0].apiVersion, 'rbac.authorization.svc.io/v1');
  }
});
