/**
 * Lists the plugin sockets under the registry directory, as upstream's plugin watcher walks it:
 * unix sockets only, names starting with '.' ignored, subdirectories followed (to a small depth).
 * Each socket carries an identity key (device, inode, birth or change time) so that a socket deleted and
 * made again under the same name counts as a new plugin, as upstream's timestamped desired state.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

export interface SocketScan {
  /** Socket path -> identity key. */
  sockets: Map<string, string>;
  /** The directory and every subdirectory walked (to be watched). */
  dirs: string[];
}

const MAX_DEPTH = 3;

/** Walks `root`; unreadable entries below it are skipped, an unreadable root rejects. */
export async function scanSockets(root: string): Promise<SocketScan> {
  const out: SocketScan = { sockets: new Map(), dirs: [] };
  const walk = async (dir: string, depth: number): Promise<void> => {
    out.dirs.push(dir);
    let names: string[];
    try {
      names = await fsp.readdir(dir);
    } catch (e) {
      if (dir === root) throw e;
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = path.join(dir, name);
      let st;
      try {
        st = await fsp.lstat(p, { bigint: true });
      } catch {
        continue; // gone between readdir and lstat
      }
      // Inode numbers are reused at once after a delete, so the time tells a new socket from the
      // old one: its birth time where the filesystem records one, else (0) its change time.
      if (st.isSocket()) out.sockets.set(p, `${st.dev}:${st.ino}:${st.birthtimeNs || st.ctimeNs}`);
      else if (st.isDirectory() && depth < MAX_DEPTH) await walk(p, depth + 1);
    }
  };
  await walk(root, 0);
  return out;
}
