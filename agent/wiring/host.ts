/**
 * Start-up phase 2: the machine. The lock file (a second agent must not touch anything), the swap
 * check, the root-dir layout, then the machine's facts (CPU, memory, kernel, OS) the Node reports.
 * A refusal is a StartupError with a message fit for the journal.
 */
import { readMachineInfo, type MachineInfo } from '../platform/machine';
import { prepareHost } from '../platform/startup-checks';
import { abortPromise, type AgentContext } from './context';

export async function checkHost(ctx: AgentContext): Promise<MachineInfo> {
  const { cfg, log, notifier, signal, running } = ctx;
  notifier.status('checking the machine');
  // Lock first (a second agent must touch nothing), then swap, then the root-dir layout.
  const host = await prepareHost({ cfg, log, layoutLog: log.child({ component: 'root-dir' }) });
  const lock = host.lock;
  if (lock) running.loops.push(abortPromise(signal).then(() => lock.release()));
  const machine = await readMachineInfo({ rootDir: cfg.flags.rootDir });
  log.info({ cpu: machine.cpuCores, memoryBytes: machine.memoryBytes, kernel: machine.kernelVersion, os: machine.osImage }, 'read machine info');
  return machine;
}
