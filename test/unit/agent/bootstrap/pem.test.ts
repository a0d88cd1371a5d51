import test from 'ava';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { certificateInfo, keyMatchesCertificate, pemBlocks, splitCertAndKey } from '../../../../agent/bootstrap/pem';

test('splits a combined file and checks the key against the certificate', async (t) => {
  const ca = await createCA('ca', new Date('2025-01-01T00:00:00Z'));
  const a = await issue(ca, { commonName: 'system:node:a', usage: 'client', validityMs: 3600_000, now: new Date('2025-01-01T00:00:00Z') });
  const b = await issue(ca, { commonName: 'system:node:b', usage: 'client', validityMs: 3600_000 });
  const bundle = a.certPem + ca.certPem + a.keyPem;
  t.deepEqual(pemBlocks(bundle).map((x) => x.type), ['CERTIFICATE', 'CERTIFICATE', 'EC PRIVATE KEY']);
  const pair = splitCertAndKey(bundle)!;
  t.is(pemBlocks(pair.certPem).length, 2);
  t.true(keyMatchesCertificate(pair.certPem, pair.keyPem));
  t.false(keyMatchesCertificate(a.certPem, b.keyPem));
  t.false(keyMatchesCertificate('junk', a.keyPem));
  const info = certificateInfo(a.certPem);
  t.is(info.notBefore, Date.parse('2024-12-31T23:59:00Z'));
  t.is(info.notAfter, Date.parse('2025-01-01T01:00:00Z'));
  t.regex(info.subject, /CN=system:node:a/);
  t.is(splitCertAndKey(a.certPem), undefined);
  t.throws(() => certificateInfo(a.keyPem), { message: /no CERTIFICATE block/ });
});
