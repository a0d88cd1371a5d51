import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import test from 'ava';
import { certValidity, ensureServingCert, rotationDeadline, type ServingCert } from '../../../../agent/server/serving-cert';
import type { Log } from '../../../../agent/platform/logger';
import { NodeServer } from '../../../../agent/server/node-server';
import { ServingCertRotator } from '../../../../agent/server/serving-cert-rotator';
import { FakeClock } from '../../../helpers/fake-clock';

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const DAY = 24 * 3600_000;

function tmp(t: { teardown(f: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-serving-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The certificate a TLS server presents (PEM-independent: its fingerprint). */
async function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.end();
      resolve(fp);
    });
    s.on('error', reject);
  });
}

const fingerprint = (c: ServingCert) => new X509Certificate(c.certPem).fingerprint256;

test('the deadline is 80% of the life; a stored certificate is reused before it and replaced after it', async (t) => {
  const dir = tmp(t);
  t.is(rotationDeadline(0, 1000), 800);
  const start = new Date(Date.UTC(2026, 0, 1));
  const first = await ensureServingCert({ certDir: dir, nodeName: 'n1', ips: [], now: start, validityMs: 10 * DAY });
  t.true(first.generated);
  const again = await ensureServingCert({ certDir: dir, nodeName: 'n1', ips: [], now: new Date(start.getTime() + 7 * DAY), validityMs: 10 * DAY });
  t.false(again.generated);
  t.is(fingerprint(again), fingerprint(first));
  const late = await ensureServingCert({ certDir: dir, nodeName: 'n1', ips: [], now: new Date(start.getTime() + 9 * DAY), validityMs: 10 * DAY });
  t.true(late.generated);
  t.not(fingerprint(late), fingerprint(first));
});

test('a generated certificate is rotated at its deadline on the injected clock, and the server presents the new one', async (t) => {
  const dir = tmp(t);
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const certOptions = { certDir: dir, nodeName: 'n1', ips: ['127.0.0.1'], validityMs: 10 * DAY };
  const first = await ensureServingCert({ ...certOptions, now: new Date(clock.now()) });
  const server = new NodeServer({ nodeName: 'n1', authenticator: { authenticate: () => Promise.resolve({ ok: false, reason: '' }) }, authorizer: { authorize: () => Promise.resolve({ allowed: false, reason: '' }) }, routes: [], log: quiet });
  const port = await server.start({ address: '127.0.0.1', port: 0, certPem: first.certPem, keyPem: first.keyPem });
  t.teardown(() => void server.close());
  t.is(await presented(port), fingerprint(first));

  const applied: ServingCert[] = [];
  const rotator = new ServingCertRotator({
    cert: certOptions,
    current: first,
    clock,
    log: quiet,
    apply: (c) => {
      server.setCertificate(c.certPem, c.keyPem);
      applied.push(c);
    },
  });
  const v = certValidity(first.certPem);
  t.is(rotator.deadline(), rotationDeadline(v.notBefore, v.notAfter));
  const ac = new AbortController();
  const running = rotator.run(ac.signal);
  // Just before the deadline nothing happens.
  await clock.advance(rotator.deadline() - clock.now() - 60_000);
  t.is(applied.length, 0);
  // Past it, a new certificate is made (key generation is real work: wait for it, not for time).
  await clock.advance(120_000);
  for (let i = 0; i < 500 && applied.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.is(applied.length, 1);
  const second = applied[0];
  t.not(fingerprint(second), fingerprint(first));
  t.is(rotator.cert, second);
  // The new one is on disk (a restart keeps it) and served on new connections without a restart.
  t.is(readFileSync(path.join(dir, 'svc-node-server.crt'), 'utf8'), second.certPem);
  t.is(await presented(port), fingerprint(second));
  // The next deadline is 80% into the new certificate's life.
  const v2 = certValidity(second.certPem);
  t.is(rotator.deadline(), rotationDeadline(v2.notBefore, v2.notAfter));
  ac.abort();
  await running;
});

test('configured files are reloaded when they change; a pair that does not match is refused and the old one kept', async (t) => {
  const dir = tmp(t);
  const a = await ensureServingCert({ certDir: path.join(dir, 'a'), nodeName: 'n1', ips: ['127.0.0.1'] });
  const b = await ensureServingCert({ certDir: path.join(dir, 'b'), nodeName: 'n1', ips: ['127.0.0.1'] });
  const certFile = path.join(dir, 'tls.crt');
  const keyFile = path.join(dir, 'tls.key');
  writeFileSync(certFile, a.certPem);
  writeFileSync(keyFile, a.keyPem);
  const clock = new FakeClock();
  const opts = { certDir: dir, nodeName: 'n1', ips: [], certFile, keyFile };
  const current = await ensureServingCert(opts);
  const server = new NodeServer({ nodeName: 'n1', authenticator: { authenticate: () => Promise.resolve({ ok: false, reason: '' }) }, authorizer: { authorize: () => Promise.resolve({ allowed: false, reason: '' }) }, routes: [], log: quiet });
  const port = await server.start({ address: '127.0.0.1', port: 0, certPem: current.certPem, keyPem: current.keyPem });
  t.teardown(() => void server.close());
  const warnings: string[] = [];
  const rotator = new ServingCertRotator({ cert: opts, current, clock, log: { ...quiet, warn: (_o, m) => void warnings.push(m) }, apply: (c) => server.setCertificate(c.certPem, c.keyPem), pollMs: 1000 });
  const ac = new AbortController();
  const running = rotator.run(ac.signal);
  const polling = async () => {
    for (let i = 0; i < 500 && clock.pending === 0; i++) await new Promise((r) => setTimeout(r, 10));
  };
  await polling();
  // Half-written: b's certificate with a's key does not load; the server keeps a.
  writeFileSync(certFile, b.certPem);
  await clock.advance(1000);
  for (let i = 0; i < 200 && warnings.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  t.true(warnings.length > 0);
  t.is(await presented(port), fingerprint(a));
  await polling();
  writeFileSync(keyFile, b.keyPem);
  await clock.advance(1000);
  for (let i = 0; i < 200 && rotator.cert.certPem !== b.certPem; i++) await new Promise((r) => setTimeout(r, 10));
  t.is(rotator.cert.certPem, b.certPem);
  t.is(await presented(port), fingerprint(b));
  ac.abort();
  await running;
});
