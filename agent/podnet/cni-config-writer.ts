/**
 * Keeps svc-node's CNI config file in the CNI config directory in step with the Node's podCIDRs:
 * written atomically (a temporary file renamed over it, mode 0644) when the directory has no
 * config of the cluster's own, rewritten when the podCIDRs change, removed when a config of the
 * cluster's own appears (see cni-config.ts for how ours is told from theirs) and on removal.
 */
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CNI_CONFIG_FILE, CNI_NETWORK_NAME, foreignConfigs, podNetworkConflist } from './cni-config';

/** What one sync did. */
export type CniConfigOutcome =
  /** No podCIDR yet: nothing to write. */
  | { kind: 'waiting' }
  /** The cluster has its own config (named); ours is not there. */
  | { kind: 'foreign'; files: string[]; removedOurs: boolean }
  | { kind: 'written' }
  | { kind: 'unchanged' };

export interface CniConfigWriterOptions {
  /** The CNI config directory the runtime reads (cniConfDir). */
  confDir: string;
  /** host-local's dataDir. */
  ipamDataDir: string;
}

export class CniConfigWriter {
  constructor(private readonly o: CniConfigWriterOptions) {}

  get file(): string {
    return path.join(this.o.confDir, CNI_CONFIG_FILE);
  }

  /** Makes the directory hold our config for podCIDRs, unless it holds the cluster's own. */
  async sync(podCIDRs: readonly string[]): Promise<CniConfigOutcome> {
    // A missing directory holds nothing; it is made only when there is something to write.
    const entries = await readdir(this.o.confDir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
    const foreign = foreignConfigs(entries);
    if (foreign.length > 0) return { kind: 'foreign', files: foreign, removedOurs: await this.remove() };
    const current = await readFile(this.file, 'utf8').catch(() => undefined);
    // A file of our name with another network in it was put there by someone else: theirs.
    if (current !== undefined && networkName(current) !== CNI_NETWORK_NAME) return { kind: 'foreign', files: [CNI_CONFIG_FILE], removedOurs: false };
    if (podCIDRs.length === 0) return { kind: 'waiting' };
    const text = podNetworkConflist({ podCIDRs, ipamDataDir: this.o.ipamDataDir });
    if (current === text) return { kind: 'unchanged' };
    await mkdir(this.o.confDir, { recursive: true, mode: 0o755 });
    // Not a name the runtime loads (no CNI extension at the end) until the rename.
    const tmp = path.join(this.o.confDir, `.${CNI_CONFIG_FILE}.${process.pid}.tmp`);
    try {
      await writeFile(tmp, text, { mode: 0o644 });
      await chmod(tmp, 0o644); // whatever the umask
      await rename(tmp, this.file);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    return { kind: 'written' };
  }

  /** Removes our config (only when it is ours: our network name inside). Resolves whether it removed one. */
  async remove(): Promise<boolean> {
    const text = await readFile(this.file, 'utf8').catch(() => undefined);
    if (text === undefined || networkName(text) !== CNI_NETWORK_NAME) return false;
    await rm(this.file, { force: true });
    return true;
  }
}

/** The `name` of a CNI config text; undefined when it is not JSON with a string name. */
function networkName(text: string): string | undefined {
  try {
    const name = (JSON.parse(text) as { name?: unknown }).name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
