import test from 'ava';
import { X509Certificate } from 'node:crypto';
import { CsrApprover } from '../../../../apiserver/controllers/csr-approver';
import { ApiError } from '../../../../apiserver/api/errors';
import { CsrSigner, parseRequest, verifyRequest } from '../../../../apiserver/controllers/csr-signer';
import { createCA, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { x509 } from '../../../../common/x509';
import { bootstrapper, certificatePem, conditionTypes, createCsr, csrType, makeRequestPem, setConditions } from './csr-fixture';
import { openFixture, waitFor } from './store-fixture';

let ca: KeyPairPem;
test.before(async () => {
  ca = await createCA('svc-ca', new Date('2025-01-01T00:00:00Z'));
});

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  const approver = new CsrApprover(f.store, f.cache, f.registry, { now: f.clock.now, log: f.log });
  const signer = new CsrSigner(f.store, f.cache, f.registry, { ca, now: f.clock.now, log: f.log });
  return { f, approver, signer };
}

const nodeUser = (n: string) => ({ username: `system:node:${n}`, groups: ['system:nodes', 'system:authenticated'] });

function reason(csr: unknown, type: string): string | undefined {
  const cs = ((csr as { status?: { conditions?: Array<{ type: string; reason?: string }> } }).status?.conditions ?? []);
  return cs.find((c) => c.type === type)?.reason;
}

test('running: a bootstrapper\'s node CSR is approved, then signed by the cluster CA with the requested subject', async (t) => {
  const { f, approver, signer } = await setup(t);
  const ac = new AbortController();
  const running = Promise.all([approver.run(ac.signal), signer.run(ac.signal)]);
  t.teardown(async () => {
    ac.abort();
    await running;
  });
  const pem = await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:worker-1' });
  await createCsr(f, 'node-csr-1', { pem, expirationSeconds: 3600 });
  const done = await waitFor(f, csrType(f), '', 'node-csr-1', (o) => certificatePem(o) !== undefined);
  t.deepEqual(conditionTypes(done), ['Approved']);
  t.is(reason(done, 'Approved'), 'AutoApproved');
  const cert = new X509Certificate(certificatePem(done)!);
  const caCert = new X509Certificate(ca.certPem);
  t.true(cert.verify(caCert.publicKey));
  t.true(cert.checkIssued(caCert));
  t.is(cert.subject, 'O=system:nodes\nCN=system:node:worker-1');
  t.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']); // client auth only
  t.false(cert.ca);
  // Validity: expirationSeconds from the (fake) signing time.
  t.is(Date.parse(cert.validTo), f.clock.ms + 3600_000);
  // The certificate carries the request's key.
  const req = new x509.Pkcs10CertificateRequest(pem);
  t.deepEqual(Buffer.from(cert.publicKey.export({ format: 'der', type: 'spki' })), Buffer.from(req.publicKey.rawData));
});

test('validity is capped at one year by default and at maxValidityMs when set', async (t) => {
  const { f, approver } = await setup(t);
  const signer = new CsrSigner(f.store, f.cache, f.registry, { ca, now: f.clock.now, log: f.log, maxValidityMs: 7 * 24 * 3600_000 });
  await createCsr(f, 'a', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:a' }), expirationSeconds: 30 * 24 * 3600 });
  await createCsr(f, 'b', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:b' }) });
  for (const n of ['a', 'b']) await approver.sync(n);
  await signer.sync('a');
  const a = new X509Certificate(certificatePem(await f.store.get(csrType(f), '', 'a'))!);
  t.is(Date.parse(a.validTo), f.clock.ms + 7 * 24 * 3600_000);
  const defaultSigner = new CsrSigner(f.store, f.cache, f.registry, { ca, now: f.clock.now, log: f.log });
  await defaultSigner.sync('b');
  const b = new X509Certificate(certificatePem(await f.store.get(csrType(f), '', 'b'))!);
  t.is(Date.parse(b.validTo), f.clock.ms + 365 * 24 * 3600_000);
});

test('a node renewing its own certificate is approved; a node asking for another node\'s is not', async (t) => {
  const { f, approver } = await setup(t);
  await createCsr(f, 'renew', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:n1' }), by: nodeUser('n1') });
  await createCsr(f, 'steal', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:n2' }), by: nodeUser('n1') });
  await approver.sync('renew');
  await approver.sync('steal');
  const renew = await f.store.get(csrType(f), '', 'renew');
  t.deepEqual(conditionTypes(renew), ['Approved']);
  t.regex(JSON.stringify(renew.status), /self svc-node client certificate renewal/);
  t.deepEqual(conditionTypes(await f.store.get(csrType(f), '', 'steal')), []);
});

test('CSRs that are not node client requests, or come from other requesters, are left alone', async (t) => {
  const { f, approver } = await setup(t);
  const cases: Array<[string, Parameters<typeof createCsr>[2]]> = [
    ['other-user', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:x' }), by: { username: 'alice', groups: ['system:authenticated'] } }],
    ['wrong-org', { pem: await makeRequestPem({ subject: 'O=system:masters, CN=system:node:x' }) }],
    ['two-orgs', { pem: await makeRequestPem({ subject: 'O=system:nodes, O=system:masters, CN=system:node:x' }) }],
    ['wrong-cn', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=admin' }) }],
    ['with-san', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:x', dnsNames: ['x.example'] }) }],
    ['server-usage', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:x' }), usages: ['digital signature', 'client auth', 'server auth'] }],
    ['other-signer', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:x' }), signerName: 'svc.io/kube-apiserver-client' }],
  ];
  for (const [name, o] of cases) await createCsr(f, name, o);
  for (const [name] of cases) await approver.sync(name);
  for (const [name] of cases) t.deepEqual(conditionTypes(await f.store.get(csrType(f), '', name)), [], name);
});

test('RSA requests with key encipherment are approved and signed too', async (t) => {
  const { f, approver, signer } = await setup(t);
  await createCsr(f, 'rsa', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:r', rsa: true }), usages: ['digital signature', 'key encipherment', 'client auth'] });
  await approver.sync('rsa');
  await signer.sync('rsa');
  const cert = new X509Certificate(certificatePem(await f.store.get(csrType(f), '', 'rsa'))!);
  t.is(cert.publicKey.asymmetricKeyType, 'rsa');
  t.true(cert.verify(new X509Certificate(ca.certPem).publicKey));
});

test('a denied CSR is neither approved nor signed', async (t) => {
  const { f, approver, signer } = await setup(t);
  await createCsr(f, 'denied', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:d' }) });
  await setConditions(f, 'denied', [{ type: 'Denied', status: 'True', reason: 'AdminDenied', message: 'no' }]);
  await approver.sync('denied');
  await signer.sync('denied');
  const csr = await f.store.get(csrType(f), '', 'denied');
  t.deepEqual(conditionTypes(csr), ['Denied']);
  t.is(certificatePem(csr), undefined);
});

test('an unapproved CSR is not signed; an approved one is signed once', async (t) => {
  const { f, signer } = await setup(t);
  await createCsr(f, 'pending', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:p' }), by: { username: 'alice', groups: [] } });
  await signer.sync('pending');
  t.is(certificatePem(await f.store.get(csrType(f), '', 'pending')), undefined);
  await setConditions(f, 'pending', [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'ok' }]);
  await signer.sync('pending');
  const first = certificatePem(await f.store.get(csrType(f), '', 'pending'));
  t.truthy(first);
  await signer.sync('pending');
  t.is(certificatePem(await f.store.get(csrType(f), '', 'pending')), first);
});

test('a forged request never gets in: the CSR type rejects it on create, and the signer\'s own check catches it too', async (t) => {
  const { f } = await setup(t);
  const forged = await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:f', forge: true });
  const err = await t.throwsAsync(createCsr(f, 'forged', { pem: forged }));
  t.is((err as ApiError).code, 422);
  // Defence in depth: what the signer runs before signing.
  t.false(await verifyRequest(parseRequest(Buffer.from(forged).toString('base64'))));
  t.true(await verifyRequest(parseRequest(Buffer.from(await makeRequestPem({ subject: 'CN=ok' })).toString('base64'))));
  t.throws(() => parseRequest(Buffer.from('-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n').toString('base64')), { message: /CERTIFICATE REQUEST/ });
  t.throws(() => parseRequest(''), { message: /empty/ });
});

test('an approved kubelet-signer request with the wrong usages gets Failed with SignerValidationFailure', async (t) => {
  const { f, signer } = await setup(t);
  await createCsr(f, 'usages', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:u' }), usages: ['digital signature', 'server auth', 'client auth'] });
  await setConditions(f, 'usages', [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'ok' }]);
  await signer.sync('usages');
  const csr = await f.store.get(csrType(f), '', 'usages');
  t.is(reason(csr, 'Failed'), 'SignerValidationFailure');
  t.regex(JSON.stringify(csr.status), /usages did not match/);
  t.is(certificatePem(csr), undefined);
});

test('the generic client signer signs any client subject with client usages, and fails server usages', async (t) => {
  const { f, signer } = await setup(t);
  await createCsr(f, 'alice', {
    pem: await makeRequestPem({ subject: 'O=dev, O=ops, CN=alice' }),
    signerName: 'svc.io/kube-apiserver-client',
    usages: ['client auth'],
    by: { username: 'alice', groups: [] },
  });
  await createCsr(f, 'srv', {
    pem: await makeRequestPem({ subject: 'CN=srv' }),
    signerName: 'svc.io/kube-apiserver-client',
    usages: ['server auth'],
    by: { username: 'alice', groups: [] },
  });
  for (const n of ['alice', 'srv']) await setConditions(f, n, [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'ok' }]);
  await signer.sync('alice');
  await signer.sync('srv');
  const cert = new X509Certificate(certificatePem(await f.store.get(csrType(f), '', 'alice'))!);
  t.is(cert.subject, 'O=dev\nO=ops\nCN=alice');
  const srv = await f.store.get(csrType(f), '', 'srv');
  t.is(reason(srv, 'Failed'), 'SignerValidationFailure');
});

test('CSRs for other signers are not touched by the signer', async (t) => {
  const { f, signer } = await setup(t);
  await createCsr(f, 'ext', { pem: await makeRequestPem({ subject: 'CN=x' }), signerName: 'example.com/custom', usages: ['client auth'] });
  await setConditions(f, 'ext', [{ type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'ok' }]);
  await signer.sync('ext');
  const csr = await f.store.get(csrType(f), '', 'ext');
  t.deepEqual(conditionTypes(csr), ['Approved']);
  t.is(certificatePem(csr), undefined);
});

test('the approver does not approve a CSR already decided', async (t) => {
  const { f, approver } = await setup(t);
  await createCsr(f, 'failed', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:z' }), by: bootstrapper });
  await setConditions(f, 'failed', [{ type: 'Failed', status: 'True', reason: 'X', message: 'y' }]);
  await approver.sync('failed');
  t.deepEqual(conditionTypes(await f.store.get(csrType(f), '', 'failed')), ['Failed']);
});
