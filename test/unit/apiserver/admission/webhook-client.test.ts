import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { postToHook } from '../../../../apiserver/admission/webhook-client';
import { createCA, issue } from '../../../../apiserver/pki/certs';

// postToHook: the admission webhooks' client for other webhooks (CRD conversion): TLS checked
// against caBundle, the answer parsed, failures worded without admission's prefix.

let server: Server;
let base = '';
let caBundle = '';

test.before(async () => {
  const ca = await createCA('hook CA');
  const cert = await issue(ca, { commonName: 'hook', ips: ['127.0.0.1'], dnsNames: ['conv.ns.svc'], usage: 'server', validityMs: 3_600_000 });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url?.startsWith('/fail')) return void res.writeHead(500).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: JSON.parse(Buffer.concat(chunks).toString('utf8')), url: req.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('posts the body over TLS verified with caBundle, with ?timeout, and resolves to the answer', async (t) => {
  const out = await postToHook({ url: `${base}/convert`, caBundle }, { a: 1 }, 30);
  t.deepEqual(out, { echoed: { a: 1 }, url: '/convert?timeout=30s' });
});

test("a service clientConfig (a CRD's conversion webhook) is posted to the Service's endpoint, verified for <svc>.<ns>.svc", async (t) => {
  const port = Number(new URL(base).port);
  const services = (ref: { namespace: string; name: string; port: number }) => Promise.resolve({ host: '127.0.0.1', port, servername: `${ref.name}.${ref.namespace}.svc` });
  const out = await postToHook({ service: { namespace: 'ns', name: 'conv', port: 443, path: '/convert' }, caBundle }, { a: 1 }, 30, { services });
  t.deepEqual(out, { echoed: { a: 1 }, url: '/convert?timeout=30s' });
  // The certificate does not name other.ns.svc: refused although the address is the same.
  const other = (ref: { namespace: string; name: string; port: number }) => services({ ...ref, name: 'other' });
  await t.throwsAsync(postToHook({ service: { namespace: 'ns', name: 'conv' }, caBundle }, {}, 5, { services: other }), { message: /^Post "https:\/\/conv\.ns\.svc:443\?timeout=5s": Hostname\/IP does not match certificate's altnames/ });
});

test('failures are the cause alone: a bad status, an unverifiable certificate, an unresolvable service', async (t) => {
  await t.throwsAsync(postToHook({ url: `${base}/fail`, caBundle }, {}, 5), { message: 'the server responded with the status code 500 but did not return more information' });
  // No caBundle: the system roots do not know the test CA.
  await t.throwsAsync(postToHook({ url: `${base}/convert` }, {}, 5), { message: new RegExp(`^Post "${base.replace(/[.]/g, '\\.')}/convert\\?timeout=5s": `) });
  const noEndpoints = () => Promise.resolve({ reason: 'MissingEndpoints' as const, message: '', detail: 'no endpoints available for service "conv"' });
  await t.throwsAsync(postToHook({ service: { namespace: 'ns', name: 'conv' } }, {}, 5, { services: noEndpoints }), {
    message: 'Post "https://conv.ns.svc:443?timeout=5s": no endpoints available for service "conv"',
  });
  await t.throwsAsync(postToHook({ service: { namespace: 'ns', name: 'conv', port: 8443, path: '/convert' } }, {}, 5), {
    message: 'Post "https://conv.ns.svc:8443/convert?timeout=5s": service "conv" in "ns" cannot be resolved: no service resolver is configured',
  });
});
