/**
 * Bodies captured from stock kubectl 1.32 (Go's encoder) decode with the schema-driven codec to
 * the JSON upstream's decoder gives. These replaced the hand-written decoders of TokenRequest and
 * the review kinds; their expectations carried over, plus the status each body carries (Go writes
 * every non-pointer field: status.token "", status.allowed false, status.incomplete false).
 */
import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { decodeObject } from '../../../../apiserver/codec/envelope';
import { selfSubjectAccessReviewSchema, selfSubjectRulesReviewSchema } from '../../../../apiserver/registry/types/authorization-reviews';
import { tokenRequestSchema } from '../../../../apiserver/registry/types/serviceaccount-token-request';

// The exact body kubectl 1.32 sends for:
//   kubectl create token sa1 --audience vault --audience x --duration 15m --bound-object-kind Pod --bound-object-name p1 --bound-object-uid u1
const KUBECTL_BODY =
  '6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e52657175657374123a0a100a0012001a0022002a0032003800420012200a057661756c740a01781a110a03506f64120276311a027031220275312084071a040a0012001a002200';
/** What stock kubectl 1.32 sent for `kubectl auth can-i get pods -n foo` (captured). */
const KUBECTL_SSAR = 'azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSOAoQCgASABoAIgAqADIAOABCABIaChgKA2ZvbxIDZ2V0GgAiACoEcG9kczIAOgAaCAgAEgAaACAAGgAiAA==';
/** `kubectl auth can-i --list -n foo`. */
const KUBECTL_SSRR = 'azhzAAoxChdhdXRob3JpemF0aW9uLms4cy5pby92MRIWU2VsZlN1YmplY3RSdWxlc1JldmlldxIfChAKABIAGgAiACoAMgA4AEIAEgUKA2ZvbxoEGAAiABoAIgA=';

test('decodes the TokenRequest kubectl create token sends', (t) => {
  t.deepEqual(decodeObject(tokenRequestSchema, Buffer.from(KUBECTL_BODY, 'hex')), {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    metadata: {},
    spec: { audiences: ['vault', 'x'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'u1' }, expirationSeconds: 900 },
    status: { token: '' },
  });
});

test('refuses bodies without the envelope or truncated ones', (t) => {
  t.throws(() => decodeObject(tokenRequestSchema, Buffer.from('{"kind":"TokenRequest"}')), { instanceOf: ApiError, message: /protobuf prefix/ });
  t.throws(() => decodeObject(tokenRequestSchema, Buffer.from(KUBECTL_BODY.slice(0, 60), 'hex')), { instanceOf: ApiError });
});

test('the captured kubectl review bodies decode', (t) => {
  t.deepEqual(decodeObject(selfSubjectAccessReviewSchema, Buffer.from(KUBECTL_SSAR, 'base64')), {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    metadata: {},
    spec: { resourceAttributes: { namespace: 'foo', verb: 'get', resource: 'pods' } },
    status: { allowed: false },
  });
  t.deepEqual(decodeObject(selfSubjectRulesReviewSchema, Buffer.from(KUBECTL_SSRR, 'base64')).spec, { namespace: 'foo' });
  t.throws(() => decodeObject(selfSubjectRulesReviewSchema, Buffer.from('{}')), { message: /protobuf prefix/ });
});
