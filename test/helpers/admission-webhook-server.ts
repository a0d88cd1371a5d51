/**
 * A stand-alone admission webhook server for the e2e tests (run as its own process:
 * `node admission-webhook-server.js <cert.pem> <key.pem> [address]`), serving HTTPS on an ephemeral
 * port of the address (default 127.0.0.1) and printing `port=<n>` once listening. Paths:
 *   /label         mutating: adds the label webhook.example.com/mutated=yes (a JSON patch), a warning and an audit annotation
 *   /refuse        validating: refuses objects labelled deny=yes, saying so; allows others
 *   /slow          never answers (the API server's timeout)
 *   /wrong-version answers an AdmissionReview of admission.k8s.io/v1beta1 whatever was asked
 *   /allow         allows everything
 * Every request's path, operation, dryRun, Host header and TLS server name go to stdout as one JSON
 * line, so tests can count calls and see how they were addressed.
 */
import type { TLSSocket } from 'node:tls';
import type { ServerResponse } from 'node:http';
import { serveReviews, type Rec } from './review-server';

function answer(res: ServerResponse, apiVersion: string, response: Rec): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ apiVersion, kind: 'AdmissionReview', response }));
}

function handle(path: string, review: Rec, res: ServerResponse): void {
  const req = review.request ?? {};
  const uid = req.uid;
  const apiVersion = review.apiVersion;
  const labels = req.object?.metadata?.labels;
  switch (path) {
    case '/label': {
      const patch = labels ? [{ op: 'add', path: '/metadata/labels/webhook.example.com~1mutated', value: 'yes' }] : [{ op: 'add', path: '/metadata/labels', value: { 'webhook.example.com/mutated': 'yes' } }];
      answer(res, apiVersion, { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['labelled by the label hook'], auditAnnotations: { labelled: 'yes' } });
      return;
    }
    case '/refuse':
      if (labels?.deny === 'yes') answer(res, apiVersion, { uid, allowed: false, status: { code: 403, message: 'objects labelled deny=yes are refused' } });
      else answer(res, apiVersion, { uid, allowed: true });
      return;
    case '/slow':
      return; // never answered: the caller's timeout ends it
    case '/wrong-version':
      answer(res, 'admission.k8s.io/v1beta1', { uid, allowed: true });
      return;
    default:
      answer(res, apiVersion, { uid, allowed: true });
  }
}

const [certFile, keyFile, address = '127.0.0.1'] = process.argv.slice(2);
serveReviews(certFile, keyFile, address, {
  describe: (path, review, req) => ({ path, operation: review.request?.operation, dryRun: review.request?.dryRun, name: review.request?.name, host: req.headers.host, servername: (req.socket as TLSSocket).servername || undefined }),
  handle,
});
