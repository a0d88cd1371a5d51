/**
 * Stock clients nobody here wrote, run as child processes against a real svc-apiserver:
 * kubectl 1.32 (/usr/bin/kubectl), the Debian Python client (python3-kubernetes, run by
 * /usr/bin/python3: the `python3` on PATH may be another interpreter without it) and ruby
 * kubeclient (ruby-kubeclient). Each run is bounded by a timeout.
 */
import { execFile } from 'node:child_process';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program; resolves with its exit code and output (a non-zero exit is not a rejection). */
export function run(file: string, args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const p = execFile(file, args, { encoding: 'utf8', timeout: o.timeoutMs ?? 30_000, env: { ...process.env, ...o.env }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr: stderr + (err && code === -1 ? `\n${err.message}` : '') });
    });
    if (o.input !== undefined) p.stdin!.end(o.input);
  });
}

/** kubectl 1.32 with the given kubeconfig. */
export function kubectl(kubeconfig: string, args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<Run> {
  return run('/usr/bin/kubectl', ['--kubeconfig', kubeconfig, ...args], o);
}

/** kubectl 1.32 that must succeed: resolves its standard output; rejects naming the command, its exit code and its output. */
export async function kubectlOk(kubeconfig: string, args: string[], o: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<string> {
  const r = await kubectl(kubeconfig, args, o);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * Runs a Python script with the Debian kubernetes client, configured from `kubeconfig` (the
 * script finds `client` imported and `config` loaded); it prints one JSON document last, which
 * is returned parsed. Rejects with the output when the script fails.
 */
export async function python<T = any>(kubeconfig: string, script: string, timeoutMs = 60_000): Promise<T> {
  const prelude = ['import json, os, sys', 'from kubernetes import client, config', 'config.load_kube_config(os.environ["SVC_KUBECONFIG"])', ''].join('\n');
  const r = await run('/usr/bin/python3', ['-c', prelude + script], { env: { SVC_KUBECONFIG: kubeconfig }, timeoutMs });
  if (r.code !== 0) throw new Error(`python exited ${r.code}:\n${r.stderr}\n${r.stdout}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as T;
}

/**
 * Runs a Ruby script with kubeclient; `client` is a Kubeclient::Client for /api v1 of the server
 * presenting the admin certificate under dataDir/pki (ca.crt verifies the server). The script
 * prints one JSON document last, returned parsed; rejects with the output when it fails.
 */
export async function ruby<T = any>(server: string, dataDir: string, script: string, timeoutMs = 60_000): Promise<T> {
  const prelude = [
    'require "kubeclient"',
    'require "json"',
    'require "openssl"',
    'pki = File.join(ENV["SVC_DATA_DIR"], "pki")',
    'ssl = { client_cert: OpenSSL::X509::Certificate.new(File.read(File.join(pki, "admin.crt"))), client_key: OpenSSL::PKey.read(File.read(File.join(pki, "admin.key"))), ca_file: File.join(pki, "ca.crt"), verify_ssl: OpenSSL::SSL::VERIFY_PEER }',
    'client = Kubeclient::Client.new(ENV["SVC_SERVER"] + "/api", "v1", ssl_options: ssl)',
    '',
  ].join('\n');
  const r = await run('ruby', ['-e', prelude + script], { env: { SVC_SERVER: server, SVC_DATA_DIR: dataDir }, timeoutMs });
  if (r.code !== 0) throw new Error(`ruby exited ${r.code}:\n${r.stderr}\n${r.stdout}`);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as T;
}
