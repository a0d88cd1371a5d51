import { spawn } from 'node:child_process';
import path from 'node:path';
import type { NodeCsrRequest, ServingCertRequest, X509Work } from './x509-child';

/** The child's script: x509-child.js next to this file (dist/agent/platform in a build and in the package). */
const CHILD = path.join(__dirname, 'x509-child.js');
const TIMEOUT_MS = 60_000;

/** Makes a self-signed serving certificate and its key in a child process. */
export function servingCertInChild(args: ServingCertRequest): Promise<{ certPem: string; keyPem: string }> {
  return inChild({ op: 'servingCert', args });
}

/** Makes a PKCS#10 request in a child process. */
export function nodeCsrInChild(args: NodeCsrRequest): Promise<{ csrPem: string }> {
  return inChild({ op: 'nodeCsr', args });
}

/**
 * Runs one piece of certificate work in a child node process (why: x509-child.ts). Keys travel
 * over the child's stdin and stdout pipes only. Rejects with the child's error, or with its exit
 * status and the end of its stderr when it fails otherwise, or after 60 s.
 */
function inChild<T>(w: X509Work): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD], { stdio: ['pipe', 'pipe', 'pipe'], timeout: TIMEOUT_MS });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.once('error', (e) => reject(new Error(`certificate helper process: ${e.message}`)));
    child.once('close', (code, signal) => {
      let answer: { ok?: T; error?: string } | undefined;
      try {
        answer = JSON.parse(Buffer.concat(out).toString('utf8')) as { ok?: T; error?: string };
      } catch {
        answer = undefined;
      }
      if (answer?.ok !== undefined) resolve(answer.ok);
      else if (answer?.error) reject(new Error(`certificate helper process: ${answer.error}`));
      else reject(new Error(`certificate helper process ${CHILD} ended with ${signal ?? `exit code ${code}`}${err ? `: ${err.trim()}` : ''}`));
    });
    child.stdin.end(JSON.stringify(w));
  });
}
