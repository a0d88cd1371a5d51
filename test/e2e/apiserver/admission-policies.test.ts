/**
 * ValidatingAdmissionPolicy with kubectl against a real svc-apiserver (issue 23, item 2): a
 * policy and its binding refuse a Deployment with upstream's message (messageExpression over a
 * variable), a Warn binding shows kubectl a warning and lets the write through, params come from
 * a ConfigMap named by the binding (and parameterNotFoundAction Deny refuses when it is missing),
 * matchConditions and namespaceSelector narrow what is validated, and bad policies are refused
 * with upstream's validation messages.
 */
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

let s: RunningApiServer;
test.before(async () => {
  s = await startApiServer();
});
test.after.always(async () => {
  await s?.stop();
});

async function k(args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 60_000, input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

async function fails(args: string[], input?: string): Promise<string> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 60_000, input });
  if (r.code === 0) throw new Error(`kubectl ${args.join(' ')} unexpectedly succeeded: ${r.stdout}`);
  return r.stderr;
}

const apply = (o: unknown) => k(['apply', '-f', '-'], JSON.stringify(o));
const AR = 'admissionregistration.k8s.io/v1';

const deployment = (name: string, ns: string, replicas: number, labels: Record<string, string> = {}) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] } } },
  });

let probes = 0;
/** Policies reach admission through informers: wait until a server-side dry run shows the policy in effect. */
async function untilRefused(ns: string, replicas: number, labels: Record<string, string> = {}): Promise<void> {
  await eventually('the policy to take effect', async () => {
    const r = await kubectl(s.kubeconfig, ['create', '--dry-run=server', '-f', '-'], { input: deployment(`probe-${probes++}`, ns, replicas, labels), timeoutMs: 60_000 });
    return r.code !== 0 ? true : undefined;
  }, 60_000, 300);
}

test.serial('a policy and its Deny binding refuse with upstream\'s message; a Warn binding is a kubectl warning', async (t) => {
  await k(['create', 'namespace', 'vap']);
  await k(['label', 'namespace', 'vap', 'policy=on']);
  await apply({
    apiVersion: AR,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'max-replicas' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
      matchConditions: [{ name: 'not-exempt', expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)" }],
      variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
      validations: [{ expression: 'variables.replicas <= 5', messageExpression: "'replicas must be at most 5, got ' + string(variables.replicas)", reason: 'Forbidden' }],
    },
  });
  await apply({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'max-replicas-deny' }, spec: { policyName: 'max-replicas', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { policy: 'on' } } } } });
  await untilRefused('vap', 6);

  const err = await fails(['create', '-f', '-'], deployment('big', 'vap', 6));
  t.regex(err, /deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied request: replicas must be at most 5, got 6/);
  t.regex(err, /Forbidden|forbidden/);
  await k(['create', '-f', '-'], deployment('small', 'vap', 2));
  // matchConditions: an exempt Deployment is not validated; the namespace selector: another namespace is not either.
  await k(['create', '-f', '-'], deployment('exempt', 'vap', 9, { exempt: 'yes' }));
  await k(['create', 'namespace', 'other']);
  await k(['create', '-f', '-'], deployment('big', 'other', 7));

  // Warn: the write goes through and kubectl prints the warning.
  await k(['create', 'namespace', 'warned']);
  await apply({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'max-replicas-warn' }, spec: { policyName: 'max-replicas', validationActions: ['Warn', 'Audit'], matchResources: { namespaceSelector: { matchLabels: { policy: 'warn' } } } } });
  await k(['label', 'namespace', 'warned', 'policy=warn']);
  const warned = await eventually('the warning', async () => {
    const r = await kubectl(s.kubeconfig, ['create', '--dry-run=server', '-f', '-'], { input: deployment(`w-${probes++}`, 'warned', 8), timeoutMs: 60_000 });
    return /Warning: Validation failed for ValidatingAdmissionPolicy/.test(r.stderr) ? r : undefined;
  }, 60_000, 300);
  t.is(warned.code, 0);
  const created = await k(['create', '-f', '-'], deployment('big', 'warned', 8));
  t.regex(created.stderr, /Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-warn': replicas must be at most 5, got 8/);
});

test.serial('params from a ConfigMap named by the binding; parameterNotFoundAction Deny refuses while it is missing', async (t) => {
  await k(['create', 'namespace', 'params']);
  await apply({
    apiVersion: AR,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'replica-limit' },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], namespaceSelector: { matchLabels: { limits: 'on' } } },
      validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' replicas'" }],
    },
  });
  await apply({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'replica-limit' }, spec: { policyName: 'replica-limit', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'params', parameterNotFoundAction: 'Deny' } } });
  await k(['label', 'namespace', 'params', 'limits=on']);
  await untilRefused('params', 1);
  t.regex(await fails(['create', '-f', '-'], deployment('d1', 'params', 1)), /ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/);
  await k(['create', 'configmap', 'limits', '-n', 'params', '--from-literal=max=3']);
  await k(['create', '-f', '-'], deployment('d1', 'params', 3));
  t.regex(await fails(['create', '-f', '-'], deployment('d2', 'params', 4)), /denied request: at most 3 replicas/);
  // Invalid (the default reason) is a 422.
  t.regex(await fails(['create', '-f', '-', '-v=6'], deployment('d3', 'params', 4)), /422/);
});

test.serial('policies and bindings are validated with upstream\'s messages', async (t) => {
  const err = await fails(['create', '-f', '-'], JSON.stringify({ apiVersion: AR, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'bad' }, spec: { validations: [{ expression: 'object.nope(' }, { expression: 'true', reason: 'Teapot' }], failurePolicy: 'Sometimes' } }));
  t.regex(err, /spec\.matchConstraints: Required value/);
  t.regex(err, /spec\.validations\[0\]\.expression: Invalid value: "object\.nope\(": compilation failed/);
  t.regex(err, /spec\.validations\[1\]\.reason: Unsupported value: "Teapot"/);
  t.regex(err, /spec\.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"/);
  const b = await fails(['create', '-f', '-'], JSON.stringify({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'bad' }, spec: { policyName: 'x', validationActions: ['Deny', 'Warn'] } }));
  t.regex(b, /spec\.validationActions: Invalid value: .*must not contain both Deny and Warn/);
  const stored = JSON.parse((await k(['get', 'validatingadmissionpolicy', 'max-replicas', '-o', 'json'])).stdout);
  t.is(stored.spec.failurePolicy, 'Fail');
  t.is(stored.spec.matchConstraints.matchPolicy, 'Equivalent');
});

test.serial('a refused request still carries the warnings gathered before the refusal (a Warn binding evaluated before a Deny)', async (t) => {
  await k(['create', 'namespace', 'both']);
  // Bindings are evaluated in name order: the Warn one first, then the Deny one refuses.
  await apply({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'aa-warn-both' }, spec: { policyName: 'max-replicas', validationActions: ['Warn'], matchResources: { namespaceSelector: { matchLabels: { both: 'yes' } } } } });
  await apply({ apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'ab-deny-both' }, spec: { policyName: 'max-replicas', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { both: 'yes' } } } } });
  await k(['label', 'namespace', 'both', 'both=yes']);
  await untilRefused('both', 6);
  const err = await fails(['create', '-f', '-'], deployment('big', 'both', 6));
  t.regex(err, /Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'aa-warn-both': replicas must be at most 5, got 6/);
  t.regex(err, /ValidatingAdmissionPolicy 'max-replicas' with binding 'ab-deny-both' denied request: replicas must be at most 5, got 6/);
});

test.serial('the status controller type-checks a policy: status.typeChecking names the undefined field, observedGeneration follows', async (t) => {
  await apply({
    apiVersion: AR,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'typo' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
      validations: [{ expression: 'object.spec.replicass <= 5' }],
    },
  });
  const status = await eventually('the type check', async () => {
    const o = JSON.parse((await k(['get', 'validatingadmissionpolicy', 'typo', '-o', 'json'])).stdout);
    return o.status?.observedGeneration === o.metadata.generation ? o.status : undefined;
  }, 60_000, 300);
  t.deepEqual(status.typeChecking.expressionWarnings, [{ fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass <= 5\n | ...........^\n" }]);
});
