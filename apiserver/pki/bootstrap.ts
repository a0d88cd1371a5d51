import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { certIdentity, createCA, issue, type KeyPairPem } from './certs';

export interface ServerPki {
  ca: KeyPairPem;
  serving: KeyPairPem;
  caFile: string;
  adminKubeconfig: string;
  /** The client certificate the server presents to node agents (pods/log), as kubeadm's apiserver-kubelet-client. */
  kubeletClient: KeyPairPem;
}

/** Writes a file atomically (temp + rename) with the given mode, so a crash never leaves half a key. */
export function writeFileAtomic(path: string, data: string | Buffer, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, path);
}

function load(dir: string, name: string): KeyPairPem | undefined {
  const crt = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (!existsSync(crt) || !existsSync(key)) return undefined;
  return { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

function save(dir: string, name: string, kp: KeyPairPem): void {
  writeFileAtomic(join(dir, `${name}.key`), kp.keyPem, 0o600);
  writeFileAtomic(join(dir, `${name}.crt`), kp.certPem, 0o644);
}

const DAY = 24 * 3600_000;

function expiresSoon(kp: KeyPairPem, now: Date): boolean {
  return certIdentity(kp.certPem).notAfter.getTime() - now.getTime() < 30 * DAY;
}

/**
 * Without --tls-cert-file the server runs its own small PKI under <data-dir>/pki (as kubeadm lays
 * out /etc/kubernetes/pki): a CA, a serving certificate for this host, and an admin client
 * certificate in group system:masters with a kubeconfig at <data-dir>/admin.kubeconfig.
 * Existing files are reused; certificates within 30 days of expiry are renewed.
 */
export async function ensureServerPki(dataDir: string, opts: { extraNames: readonly string[]; port: number; now?: Date }): Promise<ServerPki> {
  const now = opts.now ?? new Date();
  const dir = join(dataDir, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ca = load(dir, 'ca');
  if (!ca) {
    ca = await createCA('svc-ca', now);
    save(dir, 'ca', ca);
  }
  let serving = load(dir, 'apiserver');
  if (!serving || expiresSoon(serving, now)) {
    const host = hostname();
    const dns = ['localhost', host, 'svc', 'svc.default', 'svc.default.svc', ...opts.extraNames.filter((n) => !/^[\d.:]+$/.test(n))];
    const ips = ['127.0.0.1', '::1', ...opts.extraNames.filter((n) => /^[\d.:]+$/.test(n) && n !== '0.0.0.0' && n !== '::')];
    serving = await issue(ca, { commonName: 'svc-apiserver', dnsNames: [...new Set(dns)], ips: [...new Set(ips)], usage: 'server', validityMs: 365 * DAY, now });
    save(dir, 'apiserver', serving);
  }
  let admin = load(dir, 'admin');
  if (!admin || expiresSoon(admin, now)) {
    admin = await issue(ca, { commonName: 'svc-admin', organizations: ['system:masters'], usage: 'client', validityMs: 365 * DAY, now });
    save(dir, 'admin', admin);
  }
  let kubeletClient = load(dir, 'apiserver-kubelet-client');
  if (!kubeletClient || expiresSoon(kubeletClient, now)) {
    kubeletClient = await issue(ca, { commonName: 'svc-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client', validityMs: 365 * DAY, now });
    save(dir, 'apiserver-kubelet-client', kubeletClient);
  }
  const adminKubeconfig = join(dataDir, 'admin.kubeconfig');
  writeFileAtomic(
    adminKubeconfig,
    kubeconfig({ server: `https://127.0.0.1:${opts.port}`, caPem: ca.certPem, user: 'svc-admin', certPem: admin.certPem, keyPem: admin.keyPem }),
    0o600,
  );
  return { ca, serving, caFile: join(dir, 'ca.crt'), adminKubeconfig, kubeletClient };
}

/** A kubeconfig with embedded data for one cluster and one user (client certificate or token). */
export function kubeconfig(o: { server: string; caPem: string; user: string; certPem?: string; keyPem?: string; token?: string; cluster?: string }): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const user: Record<string, string> = {};
  if (o.certPem) user['client-certificate-data'] = b64(o.certPem);
  if (o.keyPem) user['client-key-data'] = b64(o.keyPem);
  if (o.token) user.token = o.token;
  const cluster = o.cluster ?? 'svc';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [{ name: o.user, user }],
    contexts: [{ name: `${o.user}@${cluster}`, context: { cluster, user: o.user } }],
    'current-context': `${o.user}@${cluster}`,
    preferences: {},
  });
}
