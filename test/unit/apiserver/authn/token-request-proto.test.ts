import test from 'ava';
import { decodeTokenRequestProto, ProtobufDecodeError } from '../../../../apiserver/authn/token-request-proto';

// The exact body kubectl 1.32 sends for:
//   kubectl create token sa1 --audience vault --audience x --duration 15m --bound-object-kind Pod --bound-object-name p1 --bound-object-uid u1
const KUBECTL_BODY =
  '6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e52657175657374123a0a100a0012001a0022002a0032003800420012200a057661756c740a01781a110a03506f64120276311a027031220275312084071a040a0012001a002200';

test('decodes the TokenRequest kubectl create token sends', (t) => {
  t.deepEqual(decodeTokenRequestProto(Buffer.from(KUBECTL_BODY, 'hex')), {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { audiences: ['vault', 'x'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'u1' }, expirationSeconds: 900 },
  });
});

test('refuses bodies without the envelope or truncated ones', (t) => {
  t.throws(() => decodeTokenRequestProto(Buffer.from('{"kind":"TokenRequest"}')), { instanceOf: ProtobufDecodeError });
  t.throws(() => decodeTokenRequestProto(Buffer.from(KUBECTL_BODY.slice(0, 60), 'hex')), { instanceOf: ProtobufDecodeError });
});
