import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeCsrType, setCsrRequestor, SIGNERS, validateCsrUpdate } from '../../../../../apiserver/registry/types/certificatesigningrequests';
import { certificateBundleError, decodePem, parseCertificateRequest } from '../../../../../apiserver/registry/types/csr-request';
import { ago, cells, fields, NOW, now } from './fixtures';

const csrType = makeCsrType(now);

// Generated once with openssl (P-256 and Ed25519 keys); fixed test data.
const EC_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIHxMIGYAgEAMDYxFTATBgNVBAoMDHN5c3RlbTpub2RlczEdMBsGA1UEAwwUc3lz
dGVtOm5vZGU6d29ya2VyLTEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASJmP3K
gzeDE0lKBl7Xzr0Y9/cVLJLnNm8spb1n+LtIuFKWeZRdJqoX1Ko3xpsEfUj1fz7N
mWFNT6svnVKmU0NkoAAwCgYIKoZIzj0EAwIDSAAwRQIgfoC++plM1Wthm9z6B3O0
0OYeESlr5pHYc+3YacwbYvICIQCwhT0FafRRGNsX9zc+CrcPOusRXZfLjWr5VgSj
Zn287g==
-----END CERTIFICATE REQUEST-----
`;
const ED_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIGeMFICAQAwHzEOMAwGA1UEAwwFYWxpY2UxDTALBgNVBAoMBGRldnMwKjAFBgMr
ZXADIQAnVt5Cnk61SZL0weW6mKQWzV/bFmGXz+m0Xi46xDWkcaAAMAUGAytlcANB
ALuvkFerkE8Oen4sWV9YuX5xFFYEMrkrplcgah1FO0KAiow5hlNltO6X3Ce2LWld
xQCb1iJaYsXRpSVxcjjTCwA=
-----END CERTIFICATE REQUEST-----
`;
const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBbjCCARWgAwIBAgIUP4I2jNFHDvL7h9VAEM1Eh3/QH8AwCgYIKoZIzj0EAwIw
DTELMAkGA1UEAwwCY2EwHhcNMjYxMTIyMDcxNzE4WhcNMzYxMTE5MDcxNzE4WjAN
MQswCQYDVQQDDAJjYTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABImY/cqDN4MT
SUoGXtfOvRj39xUskuc2byylvWf4u0i4UpZ5lF0mqhfUqjfGmwR9SPV/Ps2ZYU1P
qy+dUqZTQ2SjUzBRMB0GA1UdDgQWBBSaiBQNeDnuiu0vQE0D7oC1FgKB+TAfBgNV
HSMEGDAWgBSaiBQNeDnuiu0vQE0D7oC1FgKB+TAPBgNVHRMBAf8EBTADAQH/MAoG
CCqGSM49BAMCA0cAMEQCIBXsloyXJqM99MHPBqu8+zDQmmg7lUYA8uEduOUGUqgZ
AiB1oJH22E4VqT2PszZIMbmK35A1iiSlWqX8QfZgG3J62A==
-----END CERTIFICATE-----
`;

const b64 = (s: string) => Buffer.from(s).toString('base64');

function tampered(pem: string): string {
  const der = Buffer.from(decodePem(pem)[0].der);
  der[der.length - 3] ^= 0x01;
  return `-----BEGIN CERTIFICATE REQUEST-----
${der.toString('base64')}
-----END CERTIFICATE REQUEST-----
`;
}

function csr(spec: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'node-csr-abc', creationTimestamp: ago(5 * 60_000) },
    spec: { request: b64(EC_CSR), signerName: SIGNERS.apiserverClientKubelet, usages: ['digital signature', 'client auth'], ...spec },
  };
}

test('parseCertificateRequest reads the subject and checks the self-signature', (t) => {
  const ec = parseCertificateRequest(EC_CSR);
  t.is(ec.commonName, 'system:node:worker-1');
  t.deepEqual(ec.organizations, ['system:nodes']);
  t.is(ec.publicKey.asymmetricKeyType, 'ec');
  const ed = parseCertificateRequest(ED_CSR);
  t.is(ed.commonName, 'alice');
  t.is(ed.publicKey.asymmetricKeyType, 'ed25519');
  t.throws(() => parseCertificateRequest(tampered(EC_CSR)), { message: /invalid signature/ });
  t.throws(() => parseCertificateRequest(CA_CERT), { message: 'PEM block type must be CERTIFICATE REQUEST' });
});

test('certificate bundles must hold only CERTIFICATE blocks', (t) => {
  t.is(certificateBundleError(CA_CERT), '');
  t.is(certificateBundleError(CA_CERT + CA_CERT), '');
  t.is(certificateBundleError(EC_CSR), 'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"');
  t.is(certificateBundleError('junk'), 'must contain at least one CERTIFICATE PEM block');
});

test('a valid CSR passes', (t) => {
  const o = csr({ expirationSeconds: 3600 });
  csrType.defaults!(o);
  t.deepEqual(csrType.validate!(o), []);
});

test('invalid CSRs: request, usages, signerName, expirationSeconds', (t) => {
  const o = csr({ request: b64(tampered(EC_CSR)), usages: ['client auth', 'client auth', 'flying'], signerName: 'nodomain', expirationSeconds: 60 });
  const causes = csrType.validate!(o);
  t.deepEqual(fields(causes), ['spec.request', 'spec.usages[1]', 'spec.usages[2]', 'spec.signerName', 'spec.expirationSeconds']);
  t.is(causes[4].message, 'Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)');
  t.is(causes[3].message, `Invalid value: "nodomain": must be a fully qualified domain and path of the form 'example.com/signer-name'`);
  const missing = csr({ usages: [], signerName: '' });
  t.deepEqual(missing.spec && csrType.validate!(missing).map((c) => [c.field, c.message]), [
    ['spec.usages', 'Required value'],
    ['spec.signerName', 'Required value'],
  ]);
  t.deepEqual(fields(csrType.validate!(csr({ signerName: SIGNERS.legacyUnknown }))), ['spec.signerName']);
});

test('conditions: Approved and Denied are exclusive and must be True', (t) => {
  const o = csr();
  o.status = { conditions: [{ type: 'Approved' }, { type: 'Denied', status: 'False' }, { type: 'Approved', status: 'True' }] };
  csrType.defaults!(o);
  t.is((o.status as any).conditions[0].status, 'True');
  t.deepEqual(fields(csrType.validate!(o)), ['status.conditions[1].status', 'status.conditions[2].type', 'status.conditions']);
});

test('status updates may set the certificate but not approve; approval may approve but not set it', (t) => {
  const old = csr();
  const issued = csr();
  issued.status = { certificate: b64(CA_CERT), conditions: [{ type: 'Approved', status: 'True' }] };
  const approvedOld = structuredClone(old);
  approvedOld.status = { conditions: [{ type: 'Approved', status: 'True' }] };
  t.deepEqual(validateCsrUpdate(issued, approvedOld, 'status'), []);
  t.deepEqual(validateCsrUpdate(approvedOld, old, 'approval'), []);
  t.deepEqual(validateCsrUpdate(approvedOld, old, 'status').map((c) => c.message), ['Forbidden: updates may not add a condition of type "Approved"']);
  t.deepEqual(validateCsrUpdate(issued, approvedOld, 'approval').map((c) => c.message), ['Forbidden: updates may not set certificate content']);
  // Through the type itself: /status by default, /approval when the store says so.
  t.deepEqual(csrType.validate!(issued, approvedOld), []);
  t.deepEqual(csrType.validate!(approvedOld, old, 'approval'), []);
  t.deepEqual(fields(csrType.validate!(approvedOld, old, 'status')), ['status.conditions']);
  t.deepEqual(fields(csrType.validate!(old, approvedOld)), ['status.conditions']);
  const badCert = structuredClone(approvedOld);
  (badCert.status as any).certificate = b64(EC_CSR);
  t.deepEqual(fields(csrType.validate!(badCert, approvedOld)), ['status.certificate']);
  const changed = structuredClone(issued);
  (changed.status as any).certificate = b64(CA_CERT + CA_CERT);
  t.deepEqual(validateCsrUpdate(changed, issued, 'status').map((c) => c.message), ['Invalid value: "<certificate data>": updates may not modify existing certificate content']);
});

test('validateUpdate keeps the spec and stamps condition times', (t) => {
  const old = csr();
  old.status = { conditions: [{ type: 'Approved', status: 'True', lastTransitionTime: '2025-02-01T00:00:00Z', lastUpdateTime: '2025-02-01T00:00:00Z' }] };
  const next = csr({ signerName: 'example.com/other' });
  next.status = { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }] };
  t.deepEqual(csrType.validateUpdate!(next, old), []);
  t.is((next.spec as any).signerName, SIGNERS.apiserverClientKubelet);
  const stamp = new Date(NOW).toISOString().replace('.000Z', 'Z');
  t.deepEqual((next.status as any).conditions, [
    { type: 'Approved', status: 'True', lastUpdateTime: stamp, lastTransitionTime: '2025-02-01T00:00:00Z' },
    { type: 'Failed', status: 'True', lastUpdateTime: stamp, lastTransitionTime: stamp },
  ]);
});

test('setCsrRequestor overwrites client-sent identity', (t) => {
  const o = csr({ username: 'mallory', groups: ['system:masters'] });
  setCsrRequestor(o, { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'], extra: {} });
  t.deepEqual([(o.spec as any).username, (o.spec as any).groups, (o.spec as any).uid, (o.spec as any).extra], ['system:bootstrap:abcdef', ['system:bootstrappers'], undefined, undefined]);
});

test('table: age, signer, requestor, duration, condition', (t) => {
  const o = csr({ username: 'system:node:worker-1', expirationSeconds: 86400 });
  t.deepEqual(cells(csrType, o), {
    Age: '5m',
    SignerName: SIGNERS.apiserverClientKubelet,
    Requestor: 'system:node:worker-1',
    RequestedDuration: '24h',
    Condition: 'Pending',
  });
  o.status = { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }], certificate: 'x' };
  t.is(cells(csrType, o).Condition, 'Approved,Failed,Issued');
  delete (o.spec as any).expirationSeconds;
  t.is(cells(csrType, o).RequestedDuration, '<none>');
  t.is(csrType.fieldSelectors!['spec.signerName'](o), SIGNERS.apiserverClientKubelet);
});
