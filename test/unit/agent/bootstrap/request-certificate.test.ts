import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { createCA } from '../../../../apiserver/pki/certs';
import { ClientError, GoneError } from '../../../../agent/client/client-error';
import { csrResource } from '../../../../agent/client/resources';
import { csrObject } from '../../../../agent/bootstrap/csr';
import { CsrDeniedError, CsrRejectedError, CsrTimeoutError, csrOutcome, requestCertificate } from '../../../../agent/bootstrap/request-certificate';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

let certPem = '';
test.before(async () => {
  certPem = (await createCA('stand-in')).certPem;
});

const req = () => ({ csr: csrObject('-----BEGIN CERTIFICATE REQUEST-----\nx\n-----END CERTIFICATE REQUEST-----\n') });

function setup(o: { waitTimeoutMs?: number; maxAttempts?: number } = {}) {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const deps = { client, clock, log, waitTimeoutMs: o.waitTimeoutMs ?? 60_000, maxAttempts: o.maxAttempts ?? 2 };
  const approve = (name: string) =>
    client.mutate(csrResource, name, undefined, (c) => {
      c['status'] = { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved' }], certificate: Buffer.from(certPem).toString('base64') };
    });
  return { client, clock, log, deps, approve };
}

test('creates the CSR, watches it, and returns the certificate once approved and signed', async (t) => {
  const s = setup();
  const p = requestCertificate(s.deps, req(), new AbortController().signal);
  await flush();
  const created = s.client.callsOf('create', 'certificatesigningrequests');
  t.is(created.length, 1);
  const name = s.client.callsOf('watch')[0] && (s.client.callsOf('watch')[0].opts as { fieldSelector: string }).fieldSelector.split('=')[1];
  t.regex(name, /^node-csr-/);
  s.client.mutate(csrResource, name, undefined, (c) => (c['status'] = { conditions: [{ type: 'Approved', status: 'True' }] }));
  await flush();
  s.approve(name);
  const out = await p;
  t.is(out.certPem, certPem);
  t.is(out.csrName, name);
  t.is(s.client.openWatches, 0, 'the watch is closed afterwards');
});

test('a certificate issued before the watch opened is not missed', async (t) => {
  const s = setup();
  s.client.onWrite = (c, obj) => {
    if (c.verb === 'create') s.approve(obj.metadata.name!);
  };
  t.is((await requestCertificate(s.deps, req(), new AbortController().signal)).certPem, certPem);
});

test('a Denied or Failed condition ends with a clear error', async (t) => {
  for (const type of ['Denied', 'Failed'] as const) {
    const s = setup();
    s.client.onWrite = (c, obj) => {
      if (c.verb === 'create') {
        s.client.mutate(csrResource, obj.metadata.name!, undefined, (o) => {
          o['status'] = { conditions: [{ type, status: 'True', reason: 'PolicyDenied', message: 'node name not allowed' }] };
        });
      }
    };
    const e = await t.throwsAsync(requestCertificate(s.deps, req(), new AbortController().signal), { instanceOf: CsrDeniedError });
    t.is(e.condition, type);
    t.regex(e.message, new RegExp(`^certificate signing request node-csr-\\w+ was ${type === 'Denied' ? 'denied' : 'marked failed'} \\(reason PolicyDenied\\): node name not allowed$`));
  }
});

test('a rejected bootstrap token (401) fails at once with a message about the token', async (t) => {
  const s = setup();
  s.client.failNext((c) => c.verb === 'create', () => new ClientError(401, 'Unauthorized', 'Unauthorized'));
  const e = await t.throwsAsync(requestCertificate(s.deps, req(), new AbortController().signal), { instanceOf: CsrRejectedError });
  t.is(e.status, 401);
  t.regex(e.message, /token may be expired, deleted or wrong/);
});

test('an unreachable API server is retried with back-off until it answers', async (t) => {
  const s = setup();
  s.client.down = true;
  s.client.onWrite = (c, obj) => {
    if (c.verb === 'create') s.approve(obj.metadata.name!);
  };
  const p = requestCertificate(s.deps, req(), new AbortController().signal);
  await s.clock.advance(1000 + 2000 + 4000);
  t.is(s.client.callsOf('create').length, 4);
  t.is(s.log.find('API server unavailable').length, 4);
  s.client.down = false;
  await s.clock.advance(8000);
  t.is((await p).certPem, certPem);
});

test('no certificate within the bound: a new CSR, then CsrTimeoutError after maxAttempts', async (t) => {
  const s = setup({ waitTimeoutMs: 60_000, maxAttempts: 2 });
  let err: unknown;
  const p = requestCertificate(s.deps, req(), new AbortController().signal).catch((e) => (err = e));
  await s.clock.advance(60_000);
  t.is(s.client.callsOf('create').length, 2);
  t.is(s.log.find('no certificate issued in time').length, 1);
  await s.clock.advance(60_000);
  await p;
  t.true(err instanceof CsrTimeoutError);
  t.regex((err as Error).message, /CSR approver/);
  t.is(s.client.openWatches, 0);
});

test('an expired watch (410) re-reads the CSR and watches again; a broken one retries', async (t) => {
  const s = setup();
  const p = requestCertificate(s.deps, req(), new AbortController().signal);
  await flush();
  const name = s.client.peek<KObject>(csrResource, (s.client.callsOf('watch')[0].opts as { fieldSelector: string }).fieldSelector.split('=')[1])!.metadata.name!;
  s.client.breakWatches(new GoneError(410, 'Expired', 'too old resource version'));
  await flush();
  t.is(s.client.callsOf('get').length, 1);
  t.is(s.client.callsOf('watch').length, 2);
  s.client.breakWatches(new ClientError(0, 'ConnectionFailed', 'reset'));
  await s.clock.advance(1000);
  t.is(s.client.callsOf('watch').length, 3);
  s.approve(name);
  t.is((await p).certPem, certPem);
});

test('abort ends the wait with AbortError', async (t) => {
  const s = setup();
  const ac = new AbortController();
  const p = requestCertificate(s.deps, req(), ac.signal);
  await flush();
  ac.abort();
  await t.throwsAsync(p, { name: 'AbortError' });
});

test('csrOutcome reads bare PEM too and ignores a CSR that is only approved', (t) => {
  t.is(csrOutcome({ metadata: { name: 'x' }, status: { conditions: [{ type: 'Approved', status: 'True' }] } }), undefined);
  t.deepEqual(csrOutcome({ metadata: { name: 'x' }, status: { certificate: certPem } }), { certPem });
  t.is(csrOutcome({ metadata: { name: 'x' }, status: { certificate: 'bm90IGEgY2VydA==' } }), undefined);
});
