/**
 * Binds a gRPC server to a unix socket path the way the kubelet's CreateListener does: a stale
 * socket left by an earlier run is unlinked first, and the socket is created under a temporary
 * name in the same directory and renamed onto the final path, so clients never see a half-made
 * socket. We differ on purpose in one thing: the socket is chmod 0600 before the rename (upstream
 * leaves its mode to the umask and relies on the 0750 directory); only root may connect.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';

/** Ensures no non-socket sits at `p`: a regular file or directory there is an operator mistake, not a stale socket. */
async function removeStaleSocket(p: string): Promise<void> {
  let st;
  try {
    st = await fsp.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!st.isSocket()) throw new Error(`${p} exists and is not a socket; refusing to replace it`);
  await fsp.unlink(p);
}

/** Binds `server` at `socketPath` (mode 0600); the directory must exist. Rejects with the bind or fs error. */
export async function bindUnixSocket(server: grpc.Server, socketPath: string, mode = 0o600): Promise<void> {
  const tmp = path.join(path.dirname(socketPath), `.${path.basename(socketPath)}.${process.pid}.tmp`);
  await removeStaleSocket(socketPath);
  await fsp.rm(tmp, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${tmp}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  try {
    await fsp.chmod(tmp, mode);
    await fsp.rename(tmp, socketPath);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
}
