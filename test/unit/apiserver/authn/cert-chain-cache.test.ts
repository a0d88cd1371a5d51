/**
 * ClientCertVerifier remembers a verified chain across connections (kubectl opens one per exec):
 * a second connection with the same certificates gets the remembered result, the leaf's validity
 * is still checked on each use, and after a while the chain is verified again.
 */
import test from 'ava';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { CertPool, ClientCertVerifier } from '../../../../apiserver/authn/cert-chain';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { intermediate } from '../../../helpers/intermediate-ca';

const DAY = 86_400_000;

let chainReads = 0;

/** A request on a new connection whose peer sent `pem` then `more` (as Node links them); chainReads counts reads of the whole chain. */
function requestWith(pem: string, ...more: string[]): IncomingMessage {
  const [c, ...rest] = [pem, ...more].map((p) => new X509Certificate(p));
  const linked = rest.reduceRight<X509Certificate | undefined>((issuer, cert) => Object.create(cert, { issuerCertificate: { value: issuer } }) as X509Certificate, undefined);
  const socket = {
    getPeerCertificate: () => ({ fingerprint256: c.fingerprint256, subject: { CN: 'ignored' } }),
    getPeerX509Certificate: () => {
      chainReads++;
      return Object.create(c, { issuerCertificate: { value: linked } }) as X509Certificate;
    },
  };
  return { socket } as unknown as IncomingMessage;
}

test('a chain verified on one connection is remembered for the next; the leaf expiry still counts; it is verified again later', async (t) => {
  const ca = await createCA('client-ca');
  const alice = await issue(ca, { commonName: 'alice', usage: 'client', validityMs: DAY });
  let now = Date.now();
  const v = new ClientCertVerifier(new CertPool(ca.certPem), () => new Date(now));
  chainReads = 0;
  const first = v.verify(requestWith(alice.certPem));
  t.true(first?.ok);
  t.is(v.verify(requestWith(alice.certPem)), first, 'the same result, not verified again');
  t.is(chainReads, 1, 'a leaf the CA signed is known by its fingerprint: the second connection reads no chain');
  now += 10 * 60_000;
  const later = v.verify(requestWith(alice.certPem));
  t.true(later?.ok);
  t.not(later, first, 'verified again after a while');
  now += 2 * DAY;
  const expired = v.verify(requestWith(alice.certPem));
  t.false(expired?.ok);
  t.regex(expired && !expired.ok ? expired.reason : '', /expired/);
});

test('a failed chain is not remembered, and another certificate is not taken for a remembered one', async (t) => {
  const ca = await createCA('client-ca');
  const other = await createCA('other-ca');
  const future = await issue(ca, { commonName: 'early', usage: 'client', validityMs: DAY, now: new Date(Date.now() + DAY / 2) });
  const stranger = await issue(other, { commonName: 'mallory', usage: 'client', validityMs: DAY });
  const alice = await issue(ca, { commonName: 'alice', usage: 'client', validityMs: DAY });
  let now = Date.now();
  const v = new ClientCertVerifier(new CertPool(ca.certPem), () => new Date(now));
  t.true(v.verify(requestWith(alice.certPem))?.ok);
  t.false(v.verify(requestWith(stranger.certPem))?.ok);
  t.false(v.verify(requestWith(future.certPem))?.ok, 'not yet valid');
  now += DAY / 2 + 60_000;
  t.true(v.verify(requestWith(future.certPem))?.ok, 'valid now: the failure was not remembered');
});

test('a chain through an intermediate is remembered by all its certificates: the leaf alone is verified again, and refused', async (t) => {
  const root = await createCA('root');
  const mid = await intermediate(root);
  const bob = await issue(mid, { commonName: 'bob', usage: 'client', validityMs: DAY });
  const v = new ClientCertVerifier(new CertPool(root.certPem), () => new Date());
  const first = v.verify(requestWith(bob.certPem, mid.certPem));
  t.true(first?.ok);
  t.is(first?.ok && first.intermediates, 1);
  t.is(v.verify(requestWith(bob.certPem, mid.certPem)), first, 'the same chain: the remembered result');
  const alone = v.verify(requestWith(bob.certPem));
  t.false(alone?.ok, 'without its intermediate the leaf does not verify');
});
