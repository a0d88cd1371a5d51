/** AdmissionReview requests as upstream builds them, and the checks of a hook's answer (upstream VerifyAdmissionResponse). */
import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { admissionRequest, admissionReview, applyHookPatch, denial, HookCallError, parseReviewAnswer, reviewVersionFor } from '../../../../apiserver/admission/webhook-review';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

const deployments = makeBuiltinTypes().find((t) => t.resource === 'deployments')!;
const base: AdmissionAttributes = {
  operation: 'UPDATE',
  type: deployments,
  namespace: 'ns',
  name: 'web',
  subresource: 'scale',
  object: { metadata: { name: 'web' }, spec: { replicas: 2 } },
  oldObject: { metadata: { name: 'web' }, spec: { replicas: 1 } },
  user: { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } },
  dryRun: true,
  fieldManager: 'kubectl',
};

test('the request carries kind, resource, sub-resource, names, user, both objects, dryRun and the options', (t) => {
  const r = admissionRequest(base, 'uid-1');
  t.like(r, {
    uid: 'uid-1',
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    subResource: 'scale',
    requestSubResource: 'scale',
    name: 'web',
    namespace: 'ns',
    operation: 'UPDATE',
    userInfo: { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } },
    dryRun: true,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'], fieldManager: 'kubectl' },
  });
  t.deepEqual(r.object, base.object);
  t.deepEqual(r.oldObject, base.oldObject);
  const del = admissionRequest({ ...base, operation: 'DELETE', object: undefined, dryRun: false }, 'u');
  t.is(del.object, null);
  t.deepEqual(del.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' });
  t.deepEqual(admissionReview('v1', r), { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request: r });
});

test('the review version is the hook\'s first one spoken here', (t) => {
  t.is(reviewVersionFor(['v1beta1', 'v1']), 'v1beta1');
  t.is(reviewVersionFor(['v2', 'v1']), 'v1');
  t.is(reviewVersionFor(['v2']), undefined);
});

const ok = (response: Record<string, unknown>, apiVersion = 'admission.k8s.io/v1') => ({ apiVersion, kind: 'AdmissionReview', response: { uid: 'u', ...response } });
const patch = (ops: unknown) => Buffer.from(JSON.stringify(ops)).toString('base64');

test('an answer must be an AdmissionReview of the request\'s apiVersion with its uid (upstream\'s messages)', (t) => {
  t.throws(() => parseReviewAnswer(ok({ allowed: true }, 'admission.k8s.io/v1beta1'), 'v1', 'u', false), {
    instanceOf: HookCallError,
    message: 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview',
  });
  t.throws(() => parseReviewAnswer({ ...ok({ allowed: true }), response: { uid: 'other', allowed: true } }, 'v1', 'u', false), { message: 'expected response.uid="u", got "other"' });
  t.throws(() => parseReviewAnswer({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'v1', 'u', false), { message: /response was absent/ });
  t.true(parseReviewAnswer(ok({ allowed: true }, 'admission.k8s.io/v1beta1'), 'v1beta1', 'u', false).allowed);
});

test('patches: base64 JSONPatch with patchType; validating hooks may not patch; warnings and audit annotations kept', (t) => {
  const a = parseReviewAnswer(ok({ allowed: true, patchType: 'JSONPatch', patch: patch([{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }]), warnings: ['w1'], auditAnnotations: { k: 'v' } }), 'v1', 'u', true);
  t.deepEqual(a.patch, [{ op: 'add', path: '/metadata/labels', value: { x: 'y' } }]);
  t.deepEqual(a.warnings, ['w1']);
  t.deepEqual(a.auditAnnotations, { k: 'v' });
  t.deepEqual(applyHookPatch({ metadata: { name: 'n' } }, a.patch), { metadata: { name: 'n', labels: { x: 'y' } } });
  t.throws(() => parseReviewAnswer(ok({ allowed: true, patch: patch([]) }), 'v1', 'u', true), { message: /patchType/ });
  t.throws(() => parseReviewAnswer(ok({ allowed: true, patchType: 'JSONPatch', patch: patch([]) }), 'v1', 'u', false), { message: 'validating webhook may not return response.patch' });
  t.throws(() => applyHookPatch({ metadata: {} }, [{ op: 'replace', path: '/spec/x', value: 1 }]), { instanceOf: HookCallError });
});

test('a denial says which hook and why, with the hook\'s code (403 by default)', (t) => {
  const d = denial('a.b.c', { message: 'no', code: 422 });
  t.is(d.message, 'admission webhook "a.b.c" denied the request: no');
  t.is(d.code, 422);
  const plain = denial('a.b.c', undefined);
  t.is(plain.message, 'admission webhook "a.b.c" denied the request without explanation');
  t.is(plain.code, 403);
  t.is(plain.reason, 'Forbidden');
});
