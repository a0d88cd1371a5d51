/**
 * Start-up checks in the order that keeps a refused start harmless: take the lock first (a second
 * agent must not touch anything), then the swap check, then the root-dir layout. Each refusal is
 * a StartupError with a message fit for the journal; main logs it and exits 1.
 */
import type { AgentConfig } from '../config/types';
import { acquireLockFile, LockHeldError, type FileLock } from './lock-file';
import type { Log } from './logger';
import { ensureRootDirLayout, type LayoutResult } from './root-dir';
import { decideSwap, readSwaps } from './swap';
import { InternalError } from '../errors';

/** A start-up failure with a message fit for the operator; main logs it (no stack) and exits 1. */
export class StartupError extends InternalError {
  override readonly name = 'StartupError';
  override readonly code = 'SVC_NODE_ERR_STARTUP';
}

export interface HostPrepared {
  /** Held until release() (or process exit); undefined when --lock-file is ''. */
  lock: FileLock | undefined;
  swap: { swapOn: boolean; behavior: 'NoSwap' | 'LimitedSwap' };
  layout: LayoutResult;
}

/**
 * Runs the start-up checks; rejects with StartupError on a refusal (releasing the lock it took).
 * `layoutLog` gets the root-dir layout's lines (default `log`).
 */
export async function prepareHost(opts: { cfg: AgentConfig; log: Log; layoutLog?: Log; procSwapsPath?: string }): Promise<HostPrepared> {
  const { cfg, log } = opts;
  let lock: FileLock | undefined;
  if (cfg.flags.lockFile) {
    try {
      lock = await acquireLockFile(cfg.flags.lockFile);
    } catch (e) {
      if (e instanceof LockHeldError) throw new StartupError(e.message);
      throw new StartupError(`cannot create lock file ${cfg.flags.lockFile}: ${(e as Error).message}`);
    }
    log.info({ path: lock.path }, 'acquired lock file');
  }
  try {
    const decision = decideSwap(await readSwaps(opts.procSwapsPath), {
      failSwapOn: cfg.config.failSwapOn,
      swapBehavior: cfg.config.memorySwap.swapBehavior,
    });
    if (!decision.start) throw new StartupError(decision.message);
    if (decision.note) log.info({ swapOn: decision.swapOn, behavior: decision.behavior }, decision.note);
    let layout: LayoutResult;
    try {
      layout = await ensureRootDirLayout({ rootDir: cfg.flags.rootDir, certDir: cfg.flags.certDir, log: opts.layoutLog ?? log });
    } catch (e) {
      // A read-only or full /var/lib: one readable line in the journal, not a stack trace.
      throw new StartupError(`cannot prepare the root directory ${cfg.flags.rootDir}: ${(e as Error).message}`);
    }
    return { lock, swap: { swapOn: decision.swapOn, behavior: decision.behavior }, layout };
  } catch (e) {
    await lock?.release();
    throw e;
  }
}
