/**
 * A stand-alone CRD conversion webhook for the e2e tests (its own process:
 * `node conversion-webhook-server.js <cert.pem> <key.pem>`), serving HTTPS on an ephemeral port of
 * 127.0.0.1 and printing `port=<n>` once listening. It converts the test's Backend kind between
 * v1 (spec.host, spec.port) and v2 (spec.endpoint "host:port"), in any group. Paths:
 *   /convert   converts every object sent (answers in the ConversionReview version it was asked in)
 *   /fail      answers result Failure with a message
 *   /wrong-uid answers another uid
 * Every review's path, desiredAPIVersion and object count go to stdout as one JSON line, so tests
 * can count calls and see the batching.
 */
import type { ServerResponse } from 'node:http';
import { serveReviews, type Rec } from './review-server';

function convert(o: Rec, to: string): Rec {
  const spec = o.spec ?? {};
  const version = to.slice(to.indexOf('/') + 1);
  if (version === 'v2') return { ...o, apiVersion: to, spec: { endpoint: `${spec.host ?? ''}:${spec.port ?? 0}` } };
  const [host, port] = String(spec.endpoint ?? ':0').split(':');
  return { ...o, apiVersion: to, spec: { host, port: Number(port) } };
}

function answer(res: ServerResponse, apiVersion: string, response: Rec): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ apiVersion, kind: 'ConversionReview', response }));
}

function handle(path: string, review: Rec, res: ServerResponse): void {
  const req = review.request ?? {};
  const objects: Rec[] = req.objects ?? [];
  switch (path) {
    case '/fail':
      answer(res, review.apiVersion, { uid: req.uid, result: { status: 'Failure', message: 'the test webhook refuses to convert' } });
      return;
    case '/wrong-uid':
      answer(res, review.apiVersion, { uid: 'not-the-request-uid', result: { status: 'Success' }, convertedObjects: objects.map((o) => convert(o, req.desiredAPIVersion)) });
      return;
    default:
      answer(res, review.apiVersion, { uid: req.uid, result: { status: 'Success' }, convertedObjects: objects.map((o) => convert(o, req.desiredAPIVersion)) });
  }
}

const [certFile, keyFile] = process.argv.slice(2);
serveReviews(certFile, keyFile, '127.0.0.1', {
  describe: (path, review) => ({ path, review: review.apiVersion, to: review.request?.desiredAPIVersion, names: ((review.request?.objects ?? []) as Rec[]).map((o) => o.metadata?.name) }),
  handle,
});
