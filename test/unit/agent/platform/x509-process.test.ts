import test from 'ava';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { nodeCsrInChild, servingCertInChild } from '../../../../agent/platform/x509-process';

test('a serving certificate made in the child process carries the names and fits its key', async (t) => {
  const now = Date.now();
  const r = await servingCertInChild({ nodeName: 'node-a', ips: ['10.0.0.7'], now, validityMs: 3600_000 });
  const c = new X509Certificate(r.certPem);
  t.regex(c.subjectAltName ?? '', /DNS:node-a/);
  t.regex(c.subjectAltName ?? '', /IP Address:10\.0\.0\.7/);
  t.is(new Date(c.validTo).getTime(), Math.floor((now + 3600_000) / 1000) * 1000);
  t.true(c.checkPrivateKey(createPrivateKey(r.keyPem)));
});

test('a failure in the child process rejects with its reason', async (t) => {
  const e = await t.throwsAsync(nodeCsrInChild({ keyPem: 'not a key', commonName: 'system:node:a', organization: 'system:nodes' }));
  t.regex(e.message, /^certificate helper process: /);
});
