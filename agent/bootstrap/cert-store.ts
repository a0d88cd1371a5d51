/**
 * The agent's client certificate files in --cert-dir, laid out as the kubelet's certificate file
 * store: each issued pair is written (cert then key, mode 0600) to
 * svc-node-client-<YYYY-MM-DD-HH-MM-SS>.pem and svc-node-client-current.pem is a symlink to the
 * newest, swapped atomically (new link + rename), so readers never see half a pair. The private
 * key of a pending request lives in svc-node-client.key.tmp, so a restart while a CSR is pending
 * reuses the same key.
 */
import { constants as fsc, promises as fsp } from 'node:fs';
import { basename, join } from 'node:path';
import { certificateInfo, keyMatchesCertificate, splitCertAndKey, type CertificateInfo } from './pem';

export const pairPrefix = 'svc-node-client';

export interface StoredPair extends CertificateInfo {
  certPem: string;
  keyPem: string;
  /** The file the pair was read from (the -current symlink). */
  path: string;
}

async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.partial-${process.pid}`;
  const fh = await fsp.open(tmp, fsc.O_CREAT | fsc.O_WRONLY | fsc.O_TRUNC, mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  // open()'s mode is filtered by the umask; make it exact.
  await fsp.chmod(tmp, mode);
  await fsp.rename(tmp, path);
}

function stamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${p(d.getUTCHours())}-${p(d.getUTCMinutes())}-${p(d.getUTCSeconds())}`;
}

export class CertStore {
  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Path of the symlink kubeconfigs point at. */
  get currentPath(): string {
    return join(this.dir, `${pairPrefix}-current.pem`);
  }

  /** Path of the pending request's private key. */
  get pendingKeyPath(): string {
    return join(this.dir, `${pairPrefix}.key.tmp`);
  }

  /**
   * The current pair, or undefined when there is none, it is unreadable or malformed, or the key
   * does not match the certificate. Never rejects for those; validity in time is the caller's call.
   */
  async current(): Promise<StoredPair | undefined> {
    let text: string;
    try {
      text = await fsp.readFile(this.currentPath, 'utf8');
    } catch {
      return undefined;
    }
    const pair = splitCertAndKey(text);
    if (!pair || !keyMatchesCertificate(pair.certPem, pair.keyPem)) return undefined;
    try {
      return { ...pair, ...certificateInfo(pair.certPem), path: this.currentPath };
    } catch {
      return undefined;
    }
  }

  /** Writes a new pair and points -current at it; resolves the new file's path. */
  async update(certPem: string, keyPem: string): Promise<string> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    let name = `${pairPrefix}-${stamp(this.now())}.pem`;
    // Two rotations within a second must not overwrite the file -current points at.
    for (let i = 1; await exists(join(this.dir, name)); i++) name = `${pairPrefix}-${stamp(this.now())}-${i}.pem`;
    const file = join(this.dir, name);
    await writeAtomic(file, certPem.trimEnd() + '\n' + keyPem.trimEnd() + '\n', 0o600);
    const link = `${this.currentPath}.new-${process.pid}`;
    await fsp.rm(link, { force: true });
    await fsp.symlink(basename(file), link);
    await fsp.rename(link, this.currentPath);
    return file;
  }

  /** The pending key (PEM), or undefined when there is none. */
  async pendingKey(): Promise<string | undefined> {
    try {
      return await fsp.readFile(this.pendingKeyPath, 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Stores the pending key, mode 0600, atomically. */
  async savePendingKey(keyPem: string): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeAtomic(this.pendingKeyPath, keyPem, 0o600);
  }

  /** Removes the pending key once its certificate is stored. */
  async clearPendingKey(): Promise<void> {
    await fsp.rm(this.pendingKeyPath, { force: true });
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}

export { writeAtomic };
