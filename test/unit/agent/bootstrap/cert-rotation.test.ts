import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { CertificateRotator, nextRotationDeadline } from '../../../../agent/bootstrap/cert-rotation';
import { CertStore } from '../../../../agent/bootstrap/cert-store';
import { certificateInfo, keyMatchesCertificate } from '../../../../agent/bootstrap/pem';
import { ClientError } from '../../../../agent/client/client-error';
import { csrResource } from '../../../../agent/client/resources';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { signCsrObject, waitFor } from './signer';

let ca: KeyPairPem;
test.before(async () => {
  ca = await createCA('cluster-ca');
});

test('the deadline falls at 70-90% of the lifetime', (t) => {
  t.is(nextRotationDeadline(1000, 11_000, () => 0), 8000);
  t.is(nextRotationDeadline(1000, 11_000, () => 0.5), 9000);
  t.true(nextRotationDeadline(1000, 11_000, () => 0.999999) < 10_000);
});

test('rotates at the deadline with the current identity and swaps the client credentials in place', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-rot-'));
  try {
    const start = Date.now();
    const clock = new FakeClock(start);
    const store = new CertStore(dir, () => clock.now());
    const first = await issue(ca, { commonName: 'system:node:w', organizations: ['system:nodes'], usage: 'client', validityMs: 10 * 3600_000, now: new Date(start) });
    await store.update(first.certPem, first.keyPem);
    const info = certificateInfo(first.certPem);
    const client = new FakeApiClient();
    client.onWrite = (c, obj) => {
      if (c.verb === 'create' && c.resource === 'certificatesigningrequests') {
        void signCsrObject(ca, obj, { validityMs: 10 * 3600_000, now: new Date(clock.now()) }).then((cert) =>
          client.mutate(csrResource, obj.metadata.name!, undefined, (x) => (x['status'] = { certificate: Buffer.from(cert).toString('base64') })),
        );
      }
    };
    const log = new MemLog();
    const rotated: number[] = [];
    const heartbeat = new FakeApiClient();
    const rotator = new CertificateRotator({
      store,
      client,
      clock,
      random: () => 0.5,
      log,
      nodeName: 'w',
      bootstrapKubeconfigPath: '',
      makeClient: () => {
        throw new Error('the bootstrap client must not be used while the certificate is valid');
      },
      onRotated: (n) => rotated.push(n),
      alsoSwap: [heartbeat],
    });
    const ac = new AbortController();
    const run = rotator.run(ac.signal);
    await waitFor(() => clock.pending > 0, 'the rotator to sleep');
    const deadline = info.notBefore + (info.notAfter - info.notBefore) * 0.8;
    t.is(log.find('rotation scheduled')[0].obj['rotateAt'], new Date(deadline).toISOString());
    await clock.advance(deadline - clock.now() - 1000);
    t.is(client.callsOf('create').length, 0, 'not before the deadline');
    await clock.advance(1000);
    await waitFor(() => client.credentials.length === 1, 'the new credentials');
    const { certPem, keyPem } = client.credentials[0];
    t.true(keyMatchesCertificate(certPem, keyPem));
    t.not(keyPem, first.keyPem, 'a new key');
    t.deepEqual(heartbeat.credentials, [{ certPem, keyPem }], 'the heartbeat client presents the new certificate too');
    const cur = await store.current();
    t.is(cur!.certPem.trim(), certPem.trim());
    t.is(rotated.length, 1);
    ac.abort();
    await run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failed rotation is retried with back-off', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-rot-'));
  try {
    const clock = new FakeClock(Date.now());
    const store = new CertStore(dir, () => clock.now());
    const first = await issue(ca, { commonName: 'system:node:w', usage: 'client', validityMs: 3600_000, now: new Date(clock.now() - 3000_000) });
    await store.update(first.certPem, first.keyPem);
    const client = new FakeApiClient();
    client.failNext((c) => c.verb === 'create', () => new ClientError(403, 'Forbidden', 'no'), 1);
    client.onWrite = (c, obj) => {
      if (c.verb === 'create') {
        void signCsrObject(ca, obj, { validityMs: 3600_000 }).then((cert) =>
          client.mutate(csrResource, obj.metadata.name!, undefined, (x) => (x['status'] = { certificate: Buffer.from(cert).toString('base64') })),
        );
      }
    };
    const log = new MemLog();
    const rotator = new CertificateRotator({ store, client, clock, random: () => 0, log, nodeName: 'w', bootstrapKubeconfigPath: '', makeClient: () => client });
    const ac = new AbortController();
    const run = rotator.run(ac.signal);
    await waitFor(() => log.find('rotation failed').length === 1, 'the first failure');
    t.regex(String(log.find('rotation failed')[0].obj['error']), /403 Forbidden/);
    await clock.advance(2000);
    await waitFor(() => client.credentials.length === 1, 'the retried rotation');
    t.is(client.callsOf('create').length, 2);
    ac.abort();
    await run;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a stored pair rotation is off', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-rot-'));
  try {
    const log = new MemLog();
    const client = new FakeApiClient();
    await new CertificateRotator({ store: new CertStore(dir), client, clock: new FakeClock(), log, nodeName: 'w', bootstrapKubeconfigPath: '', makeClient: () => client }).run(new AbortController().signal);
    t.is(log.find('rotation is off').length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
