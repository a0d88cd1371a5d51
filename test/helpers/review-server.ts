/**
 * What the e2e tests' stand-alone webhook processes share (admission-webhook-server.ts,
 * conversion-webhook-server.ts): HTTPS with the certificate and key files given, one JSON review
 * per POST (a body that is not JSON is a 400), a JSON line per review on stdout for the test to
 * read, `port=<n>` printed once listening on an ephemeral port, and exit on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';

export type Rec = Record<string, any>;

export interface ReviewServer {
  /** The line logged for one review (what the tests assert on). */
  describe(path: string, review: Rec, req: IncomingMessage): Rec;
  /** Answers one review. */
  handle(path: string, review: Rec, res: ServerResponse): void;
}

/** Serves reviews on an ephemeral port of address until SIGTERM. */
export function serveReviews(certFile: string, keyFile: string, address: string, s: ReviewServer): void {
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      let review: Rec;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      process.stdout.write(JSON.stringify(s.describe(path, review, req)) + '\n');
      s.handle(path, review, res);
    });
  });
  server.listen(0, address, () => {
    const addr = server.address();
    process.stdout.write(`port=${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}
