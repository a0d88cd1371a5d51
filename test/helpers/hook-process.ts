/**
 * A test webhook server (admission or conversion, ./admission-webhook-server.ts and
 * ./conversion-webhook-server.ts) as a separate process over real TLS: a serving certificate from
 * a test CA written to `dir`, the process started with it, its port read from its first line and
 * every JSON line it prints after (one per request it answered) collected in `records`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCA, issue } from '../../apiserver/pki/certs';
import { repoRoot } from './apiserver-process';

export interface HookProcess<R> {
  process: ChildProcess;
  port: number;
  /** The test CA, base64 (a clientConfig's caBundle). */
  caBundle: string;
  records: R[];
}

export interface HookProcessOptions {
  /** More names for its certificate (a Service's `<svc>.<ns>.svc`). */
  dnsNames?: readonly string[];
  /** The address it listens on (default 127.0.0.1; the admission hook server takes one). */
  address?: string;
}

/** Starts dist/test/helpers/<script>; resolves once it listens. */
export async function startHookProcess<R>(script: string, dir: string, commonName: string, o: HookProcessOptions = {}): Promise<HookProcess<R>> {
  const ca = await createCA(`${commonName} test CA`);
  const ips = [...new Set(['127.0.0.1', o.address ?? '127.0.0.1'])];
  const serving = await issue(ca, { commonName, ips, dnsNames: ['localhost', ...(o.dnsNames ?? [])], usage: 'server', validityMs: 3_600_000 });
  writeFileSync(join(dir, 'tls.crt'), serving.certPem);
  writeFileSync(join(dir, 'tls.key'), serving.keyPem);
  const args = [join(repoRoot, 'dist', 'test', 'helpers', script), join(dir, 'tls.crt'), join(dir, 'tls.key'), ...(o.address ? [o.address] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const records: R[] = [];
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited ${code} before listening`)));
    child.stdout.on('data', (c: Buffer) => {
      buffered += c.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('port=')) resolve(Number(line.slice(5)));
        else if (line.startsWith('{')) records.push(JSON.parse(line) as R);
      }
    });
  });
  return { process: child, port, caBundle: Buffer.from(ca.certPem).toString('base64'), records };
}
