/**
 * --lock-file: makes sure only one agent runs per machine.
 *
 * Node has no flock(2), so the lock itself is a unix socket bound in the Linux *abstract*
 * namespace under a name derived from the lock file's real path ("\0svc-node-lock:/var/run/svc-node.lock").
 * bind() on a taken name fails with EADDRINUSE, and the kernel frees the name the moment the
 * holding process dies however it dies (kill -9, OOM), so a crashed agent never leaves a stale
 * lock. The file itself is still created (O_CREAT, mode 0600) and holds the holder's pid, for
 * operators and for the error message of a refused second agent.
 *
 * Limits (deliberate): abstract names are per network namespace, so two agents in different
 * network namespaces do not exclude each other (the agent runs in the host's); and any local
 * process in the same namespace can bind the name first, which blocks start-up (it cannot take
 * over a running agent). The upstream kubelet uses flock on the file instead.
 */
import { createHash } from 'node:crypto';
import { promises as fsp, constants as fsc } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';
import { ConflictError } from '../errors';

export class LockHeldError extends ConflictError {
  override readonly name = 'LockHeldError';
  override readonly code = 'SVC_NODE_ERR_LOCK_HELD';
  constructor(
    readonly path: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `lock file ${path} is held by another svc-node process${holderPid ? ` (pid ${holderPid})` : ''}; only one agent may run on a machine`,
    );
  }
}

/** A held lock. */
export interface FileLock {
  readonly path: string;
  /** Releases the lock; idempotent. The file is left in place, as the kubelet leaves its lock file. */
  release(): Promise<void>;
}

// sun_path is 108 bytes including the leading NUL of an abstract name.
const maxAbstractName = 107;

/** The abstract socket name that stands for a lock file path. */
export function lockSocketName(realPath: string): string {
  const plain = `svc-node-lock:${realPath}`;
  if (Buffer.byteLength(plain) <= maxAbstractName) return '\0' + plain;
  return '\0svc-node-lock:sha256:' + createHash('sha256').update(realPath).digest('hex');
}

function listen(server: Server, name: string): Promise<void> {
  return new Promise((ok, fail) => {
    const onError = (e: Error) => {
      server.off('listening', onListening);
      fail(e);
    };
    const onListening = () => {
      server.off('error', onError);
      ok();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ path: name });
  });
}

async function readHolderPid(path: string): Promise<number | undefined> {
  try {
    const n = Number.parseInt((await fsp.readFile(path, 'utf8')).trim(), 10);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock or rejects with LockHeldError when another live process holds it. Rejects with
 * the fs error when the file cannot be created (e.g. a missing parent directory). Does not block.
 */
export async function acquireLockFile(path: string, opts: { pid?: number } = {}): Promise<FileLock> {
  const abs = resolve(path);
  const fh = await fsp.open(abs, fsc.O_CREAT | fsc.O_RDWR, 0o600);
  let server: Server | undefined;
  try {
    const real = await fsp.realpath(abs);
    server = createServer((conn) => conn.destroy());
    try {
      await listen(server, lockSocketName(real));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new LockHeldError(abs, await readHolderPid(abs));
      throw e;
    }
    // The lock must not keep the process alive on its own; it lives until release() or exit.
    server.unref();
    await fh.truncate(0);
    await fh.write(`${opts.pid ?? process.pid}\n`, 0, 'utf8');
    await fh.sync();
  } catch (e) {
    server?.close();
    await fh.close();
    throw e;
  }
  const held = server;
  let released = false;
  return {
    path: abs,
    async release() {
      if (released) return;
      released = true;
      await new Promise<void>((ok) => held.close(() => ok()));
      await fh.close();
    },
  };
}
