import test from 'ava';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { x509 } from '../../../../common/x509';
import { csrObject, generateClientKey, kubeletClientSigner, nodeCertificateRequest } from '../../../../agent/bootstrap/csr';

test('keys are ECDSA P-256 in SEC1 PEM', (t) => {
  const pem = generateClientKey();
  t.regex(pem, /^-----BEGIN EC PRIVATE KEY-----/);
  const k = createPrivateKey(pem);
  t.is(k.asymmetricKeyType, 'ec');
  t.is(k.asymmetricKeyDetails?.namedCurve, 'prime256v1');
});

test('the request names system:node:<name> in system:nodes, is signed by the key, and carries its public key', async (t) => {
  const key = generateClientKey();
  const pem = await nodeCertificateRequest(key, 'worker-1');
  const req = new x509.Pkcs10CertificateRequest(pem);
  t.is(req.subject, 'O=system:nodes, CN=system:node:worker-1');
  t.true(await req.verify());
  const spki = Buffer.from(req.publicKey.rawData);
  t.deepEqual(spki, createPublicKey(createPrivateKey(key)).export({ format: 'der', type: 'spki' }));
});

test('the CertificateSigningRequest object follows certificates.svc.io/v1', (t) => {
  const o = csrObject('-----BEGIN CERTIFICATE REQUEST-----\nabc\n-----END CERTIFICATE REQUEST-----\n', { expirationSeconds: 3600 });
  t.is(o.apiVersion, 'certificates.svc.io/v1');
  t.is(o.kind, 'CertificateSigningRequest');
  t.deepEqual(o.metadata, { generateName: 'node-csr-' });
  const spec = o['spec'] as Record<string, unknown>;
  t.is(spec['signerName'], kubeletClientSigner);
  t.is(spec['signerName'], 'svc.io/kube-apiserver-client-kubelet');
  t.deepEqual(spec['usages'], ['digital signature', 'client auth']);
  t.is(spec['expirationSeconds'], 3600);
  t.regex(Buffer.from(spec['request'] as string, 'base64').toString(), /^-----BEGIN CERTIFICATE REQUEST-----/);
  t.false('expirationSeconds' in (csrObject('x')['spec'] as object));
});
