import test from 'ava';
import { DEFAULT_POD_SECURITY } from '../../../../../apiserver/admission/pod-security/config';
import { PodSecurityAdmission, type PodSecurityConfig } from '../../../../../apiserver/admission/pod-security/plugin';
import { ApiError } from '../../../../../apiserver/api/errors';
import type { KObject } from '../../../../../apiserver/api/types';
import { builtinTypes } from '../../../../../apiserver/registry/builtin';
import type { AdmissionAttributes } from '../../../../../apiserver/store/write-admission';

const typeOf = (resource: string) => builtinTypes.find((t) => t.resource === resource)!;
const user = { username: 'alice', groups: [] };

function setup(nsLabels: Record<string, string>, pods: KObject[] = [], config: PodSecurityConfig = DEFAULT_POD_SECURITY) {
  const ns: KObject = { metadata: { name: 'team', labels: nsLabels } };
  return new PodSecurityAdmission(config, { namespace: (n) => Promise.resolve(n === 'team' ? ns : undefined), pods: () => Promise.resolve(pods) });
}

const plainPod = (name = 'p'): KObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'team' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

function attrs(resource: string, object: KObject, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return { operation: 'CREATE', type: typeOf(resource), namespace: 'team', name: object.metadata.name ?? '', subresource: '', object, user, dryRun: false, warnings: [], auditAnnotations: {}, ...extra };
}

test('enforce refuses a violating pod with upstream\'s 403 message and records the enforced policy', async (t) => {
  const a = attrs('pods', plainPod());
  const err = await t.throwsAsync(setup({ 'pod-security.kubernetes.io/enforce': 'baseline' }).validate(attrs('pods', { ...plainPod(), spec: { hostNetwork: true, containers: [{ name: 'c' }] } })));
  t.true(err instanceof ApiError);
  t.is((err as ApiError).code, 403);
  t.is(err.message, 'pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
  await setup({ 'pod-security.kubernetes.io/enforce': 'baseline' }).validate(a);
  t.deepEqual(a.auditAnnotations, { 'pod-security.kubernetes.io/enforce-policy': 'baseline:latest' });
  t.deepEqual(a.warnings, []);
});

test('warn and audit never refuse: a warning for the client and an audit annotation', async (t) => {
  const a = attrs('pods', plainPod());
  await setup({ 'pod-security.svc.io/warn': 'restricted', 'pod-security.svc.io/audit': 'restricted', 'pod-security.svc.io/audit-version': 'v1.30' }).validate(a);
  t.is(a.warnings?.length, 1);
  t.regex(a.warnings![0], /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "c" must set/);
  t.regex(a.auditAnnotations!['pod-security.kubernetes.io/audit-violations'], /^would violate PodSecurity "restricted:v1.30": allowPrivilegeEscalation/);
});

test('workload templates get warnings but are never refused (upstream: enforce applies to pods only)', async (t) => {
  const deployment: KObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'team' }, spec: { template: { metadata: {}, spec: { hostPID: true, containers: [{ name: 'c' }] } } } };
  const a = attrs('deployments', deployment);
  await setup({ 'pod-security.kubernetes.io/enforce': 'baseline' }).validate(a);
  t.deepEqual(a.warnings, ['would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)']);
  const cron: KObject = { metadata: { name: 'c', namespace: 'team' }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', securityContext: { privileged: true } }] } } } } } };
  const b = attrs('cronjobs', cron);
  await setup({ 'pod-security.kubernetes.io/warn': 'baseline' }).validate(b);
  t.deepEqual(b.warnings, ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
});

test('exempt users, namespaces and runtime classes pass, noted in the audit annotations', async (t) => {
  const config: PodSecurityConfig = { ...DEFAULT_POD_SECURITY, exemptions: { usernames: ['alice'], namespaces: [], runtimeClasses: ['kata'] } };
  const a = attrs('pods', { ...plainPod(), spec: { hostIPC: true, containers: [{ name: 'c' }] } });
  await setup({ 'pod-security.kubernetes.io/enforce': 'restricted' }, [], config).validate(a);
  t.is(a.auditAnnotations!['pod-security.kubernetes.io/exempt'], 'user');
  const b = attrs('pods', { ...plainPod(), spec: { runtimeClassName: 'kata', hostIPC: true, containers: [{ name: 'c' }] } }, { user: { username: 'bob', groups: [] } });
  await setup({ 'pod-security.kubernetes.io/enforce': 'restricted' }, [], config).validate(b);
  t.is(b.auditAnnotations!['pod-security.kubernetes.io/exempt'], 'runtimeClass');
});

test('an update that changes no image is not checked again; one that changes an image is', async (t) => {
  const old = { ...plainPod(), spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox' }] } };
  const plugin = setup({ 'pod-security.kubernetes.io/enforce': 'baseline' });
  const labelsOnly = { ...old, metadata: { ...old.metadata, labels: { x: 'y' } } };
  await t.notThrowsAsync(plugin.validate(attrs('pods', labelsOnly, { operation: 'UPDATE', oldObject: old })));
  const newImage = { ...old, spec: { ...old.spec, containers: [{ name: 'c', image: 'busybox:2' }] } };
  await t.throwsAsync(plugin.validate(attrs('pods', newImage, { operation: 'UPDATE', oldObject: old })), { message: /violates PodSecurity "baseline:latest"/ });
  await t.notThrowsAsync(plugin.validate(attrs('pods', newImage, { operation: 'UPDATE', oldObject: old, subresource: 'status' })));
});

test('a namespace with an unreadable label is refused (422 naming the label); an unchanged bad label is let through on update', async (t) => {
  const ns: KObject = { metadata: { name: 'team', labels: { 'pod-security.kubernetes.io/enforce': 'strict' } } };
  const err = await t.throwsAsync(setup({}).validate(attrs('namespaces', ns, { namespace: '' })));
  t.is((err as ApiError).code, 422);
  t.is(err.message, 'Namespace "team" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
  await t.notThrowsAsync(setup({}).validate(attrs('namespaces', ns, { namespace: '', operation: 'UPDATE', oldObject: ns })));
});

test('tightening a namespace\'s enforce level warns about its existing pods, one line per kind of violation', async (t) => {
  const hostNet = (name: string): KObject => ({ metadata: { name }, spec: { hostNetwork: true, containers: [{ name: 'c' }] } });
  const pods = [hostNet('web-2'), hostNet('web-1'), hostNet('web-3'), { metadata: { name: 'ok' }, spec: { containers: [{ name: 'c' }] } }, { metadata: { name: 'priv' }, spec: { containers: [{ name: 'c', securityContext: { privileged: true } }] } }];
  const old: KObject = { metadata: { name: 'team', labels: {} } };
  const next: KObject = { metadata: { name: 'team', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } };
  const a = attrs('namespaces', next, { namespace: '', operation: 'UPDATE', oldObject: old });
  await setup({}, pods).validate(a);
  t.deepEqual(a.warnings, ['existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"', 'priv: privileged', 'web-1 (and 2 other pods): host namespaces']);
  // Loosening (or keeping) the level checks nothing.
  const b = attrs('namespaces', old, { namespace: '', operation: 'UPDATE', oldObject: next });
  await setup({}, pods).validate(b);
  t.deepEqual(b.warnings, []);
});
