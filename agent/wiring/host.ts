/**
 * Start-up phase 2: the machine. The lock file (a second agent must not touch anything), the swap
 * check, the root-dir layout, then the machine's facts (CPU, memory, kernel, OS) the Node reports.
 * A refusal is a StartupError with a message fit for the journal.
 */
import { acquireLockFile, LockHeldError, type FileLock } from '../platform/lock-file';
import { readMachineInfo, type MachineInfo } from '../platform/machine';
import { ensureRootDirLayout } from '../platform/root-dir';
import { StartupError } from '../platform/startup-checks';
import { decideSwap, readSwaps } from '../platform/swap';
import { abortPromise, type AgentContext } from './context';

export async function checkHost(ctx: AgentContext): Promise<MachineInfo> {
  const { cfg, log, notifier, signal, running } = ctx;
  const c = cfg.config;
  notifier.status('checking the machine');
  let lock: FileLock;
  try {
    lock = await acquireLockFile(cfg.flags.lockFile);
  } catch (e) {
    if (e instanceof LockHeldError) throw e;
    throw new StartupError(`cannot create lock file ${cfg.flags.lockFile}: ${(e as Error).message}`);
  }
  running.loops.push(abortPromise(signal).then(() => lock.release()));

  const swap = decideSwap(await readSwaps(), { failSwapOn: c.failSwapOn, swapBehavior: c.memorySwap.swapBehavior });
  if (!swap.start) throw new StartupError(swap.message);
  if (swap.note) log.info({ swapOn: swap.swapOn, behavior: swap.behavior }, swap.note);

  try {
    await ensureRootDirLayout({ rootDir: cfg.flags.rootDir, certDir: cfg.flags.certDir, log: log.child({ component: 'root-dir' }) });
  } catch (e) {
    // A read-only or full /var/lib: one readable line in the journal, not a stack trace.
    throw new StartupError(`cannot prepare the root directory ${cfg.flags.rootDir}: ${(e as Error).message}`);
  }
  const machine = await readMachineInfo({ rootDir: cfg.flags.rootDir });
  log.info({ cpu: machine.cpuCores, memoryBytes: machine.memoryBytes, kernel: machine.kernelVersion, os: machine.osImage }, 'read machine info');
  return machine;
}
