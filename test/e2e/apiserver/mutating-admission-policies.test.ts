/**
 * MutatingAdmissionPolicy with kubectl against a real svc-apiserver (issue 23, item 2), started
 * with the MutatingAdmissionPolicy feature gate and admissionregistration.k8s.io/v1beta1 turned on:
 * an ApplyConfiguration policy bound to a labelled namespace adds a label and a sidecar container
 * to the Deployments created there (and leaves other namespaces alone), a JSONPatch policy
 * annotates ConfigMaps, an IfNeeded policy runs again after a mutating webhook (a separate HTTPS
 * process) changed the object, v1alpha1 stays off, and a bad policy is refused with the
 * validation message.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startHookProcess } from '../../helpers/hook-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

let s: RunningApiServer;
test.before(async () => {
  s = await startApiServer({ args: ['--feature-gates=MutatingAdmissionPolicy=true', '--runtime-config=admissionregistration.k8s.io/v1beta1=true'] });
});
let hooks: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'svc-map-'));
test.after.always(async () => {
  hooks?.kill('SIGTERM');
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function k(args: string[], input?: string): Promise<{ stdout: string; stderr: string }> {
  const r = await kubectl(s.kubeconfig, args, { timeoutMs: 60_000, input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

const apply = (o: unknown) => k(['apply', '-f', '-'], JSON.stringify(o));
const AR = 'admissionregistration.k8s.io/v1beta1';

const deployment = (name: string, ns: string) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] } } },
  });

let probes = 0;
/** Policies reach admission through informers: wait until a server-side dry run shows the mutation. */
async function untilMutated(ns: string): Promise<void> {
  let last = '';
  await eventually('the policy to take effect', async () => {
    const r = await kubectl(s.kubeconfig, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], { input: deployment(`probe-${probes++}`, ns), timeoutMs: 60_000 });
    last = `${r.code} ${r.stderr} ${r.stdout.slice(0, 300)}`;
    return r.code === 0 && (JSON.parse(r.stdout) as { metadata: { labels?: Record<string, string> } }).metadata.labels?.team === 'platform' ? true : undefined;
  }, 60_000, 300).catch((err: Error) => {
    throw new Error(`${err.message}; last answer: ${last}`);
  });
}

test.serial('an ApplyConfiguration policy adds a label and a sidecar to created Deployments in the bound namespace', async (t) => {
  await k(['create', 'namespace', 'mesh']);
  await k(['label', 'namespace', 'mesh', 'sidecars=on']);
  await k(['create', 'namespace', 'plain']);
  await apply({
    apiVersion: AR,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: 'sidecar' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
      reinvocationPolicy: 'Never',
      mutations: [{
        patchType: 'ApplyConfiguration',
        applyConfiguration: {
          expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}, spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "proxy", image: "registry.example/proxy:2"}]}}}}',
        },
      }],
    },
  });
  await apply({ apiVersion: AR, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'sidecar-mesh' }, spec: { policyName: 'sidecar', matchResources: { namespaceSelector: { matchLabels: { sidecars: 'on' } } } } });
  await untilMutated('mesh');

  await k(['create', '-f', '-'], deployment('web', 'mesh'));
  const web = JSON.parse((await k(['get', 'deployment', 'web', '-n', 'mesh', '-o', 'json'])).stdout);
  t.deepEqual(web.metadata.labels, { app: 'web', team: 'platform' });
  t.deepEqual(web.spec.template.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`), ['app=registry.example/app:1', 'proxy=registry.example/proxy:2']);

  await k(['create', '-f', '-'], deployment('web', 'plain'));
  const plain = JSON.parse((await k(['get', 'deployment', 'web', '-n', 'plain', '-o', 'json'])).stdout);
  t.deepEqual(plain.metadata.labels, { app: 'web' });
  t.is(plain.spec.template.spec.containers.length, 1);

  const listed = (await k(['get', 'mutatingadmissionpolicies'])).stdout;
  t.regex(listed, /NAME\s+MUTATIONS\s+PARAMKIND\s+AGE/);
  t.regex(listed, /sidecar\s+1\s+<unset>/);
});

test.serial('a JSONPatch policy annotates ConfigMaps with the requesting user', async (t) => {
  await apply({
    apiVersion: AR,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: 'created-by' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
      matchConditions: [{ name: 'labelled', expression: 'has(object.metadata.labels) && "track" in object.metadata.labels' }],
      reinvocationPolicy: 'Never',
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[JSONPatch{op: "add", path: "/metadata/annotations", value: {"example.com/created-by": request.userInfo.username}}]' } }],
    },
  });
  await apply({ apiVersion: AR, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'created-by' }, spec: { policyName: 'created-by' } });
  const cm = (name: string, labels?: Record<string, string>) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'plain', labels } });
  let n = 0;
  await eventually('the JSONPatch policy to take effect', async () => {
    const r = await kubectl(s.kubeconfig, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], { input: cm(`probe-${n++}`, { track: 'yes' }), timeoutMs: 60_000 });
    return r.code === 0 && (JSON.parse(r.stdout) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ? true : undefined;
  }, 60_000, 300);
  await k(['create', '-f', '-'], cm('tracked', { track: 'yes' }));
  await k(['create', '-f', '-'], cm('untracked'));
  const tracked = JSON.parse((await k(['get', 'configmap', 'tracked', '-n', 'plain', '-o', 'json'])).stdout);
  const untracked = JSON.parse((await k(['get', 'configmap', 'untracked', '-n', 'plain', '-o', 'json'])).stdout);
  // The e2e kubeconfig is the cluster admin's client certificate.
  t.regex(tracked.metadata.annotations['example.com/created-by'], /\S/);
  t.is(untracked.metadata.annotations?.['example.com/created-by'], undefined);
});

test.serial("an IfNeeded policy runs again after a mutating webhook changed the object (upstream's reinvocation spans policies and webhooks)", async (t) => {
  const h = await startHookProcess<{ path: string; name: string }>('admission-webhook-server.js', dir, 'hooks');
  hooks = h.process;
  await k(['create', 'namespace', 'reinvoke']);
  const selected = { objectSelector: { matchLabels: { reinvoke: 'me' } } };
  // The hook (/label) adds webhook.example.com/mutated=yes; it runs after the policies, as upstream orders them.
  await apply({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'label' },
    webhooks: [{ name: 'label.hooks.example.com', clientConfig: { url: `https://127.0.0.1:${h.port}/label`, caBundle: h.caBundle }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], sideEffects: 'None', admissionReviewVersions: ['v1'], ...selected }],
  });
  await apply({
    apiVersion: AR,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: 'saw-hook' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], ...selected },
      reinvocationPolicy: 'IfNeeded',
      mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"saw-hook": "webhook.example.com/mutated" in object.metadata.labels ? "yes" : "no"}}}' } }],
    },
  });
  await apply({ apiVersion: AR, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'saw-hook' }, spec: { policyName: 'saw-hook' } });
  const cm = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'reinvoke', labels: { reinvoke: 'me' } } });
  let n = 0;
  const labelsOf = (out: string) => (JSON.parse(out) as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {};
  await eventually('the hook and the policy to take effect', async () => {
    const r = await kubectl(s.kubeconfig, ['create', '--dry-run=server', '-o', 'json', '-f', '-'], { input: cm(`probe-${n++}`), timeoutMs: 60_000 });
    return r.code === 0 && labelsOf(r.stdout)['webhook.example.com/mutated'] === 'yes' && labelsOf(r.stdout)['saw-hook'] ? true : undefined;
  }, 60_000, 300);
  await k(['create', '-f', '-'], cm('seen'));
  const stored = labelsOf((await k(['get', 'configmap', 'seen', '-n', 'reinvoke', '-o', 'json'])).stdout);
  // The first run saw no hook label ("no"); its second run, after the hook's change, does.
  t.deepEqual(stored, { reinvoke: 'me', 'webhook.example.com/mutated': 'yes', 'saw-hook': 'yes' });
  // The hook (reinvocationPolicy Never) was called once for it.
  t.is(h.records.filter((r) => r.name === 'seen').length, 1);
  await k(['delete', 'mutatingwebhookconfiguration', 'label']);
});

test.serial('v1alpha1 stays off without --runtime-config, and a bad policy is refused with the validation message', async (t) => {
  const alpha = await kubectl(s.kubeconfig, ['get', '--raw', '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies'], { timeoutMs: 60_000 });
  t.not(alpha.code, 0);
  t.regex(alpha.stderr, /NotFound|not found/);
  const bad = await kubectl(s.kubeconfig, ['apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: AR, kind: 'MutatingAdmissionPolicy', metadata: { name: 'bad' }, spec: { matchConstraints: { resourceRules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }, reinvocationPolicy: 'Never', mutations: [{ patchType: 'JSONPatch' }] } }),
    timeoutMs: 60_000,
  });
  t.not(bad.code, 0);
  t.regex(bad.stderr, /spec.matchConstraints.resourceRules\[0\].operations\[0\]: Unsupported value: "DELETE"/);
  t.regex(bad.stderr, /spec.mutations\[0\].jsonPatch: Required value: must be specified when patchType is JSONPatch/);
});
