import type { RunningApiServer } from '../../test/helpers/apiserver-process';

/** SIGTERM, wait for a graceful exit for a while, then SIGKILL. Idempotent. */
export async function stopApi(api: RunningApiServer): Promise<void> {
  const p = api.proc;
  if (p.exitCode !== null || p.signalCode !== null) return;
  const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
  try {
    await api.stop('SIGTERM');
  } finally {
    clearTimeout(timer);
  }
}
