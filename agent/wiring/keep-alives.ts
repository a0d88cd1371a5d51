/** Start-up phase 1: the systemd watchdog's keep-alives, first, since bootstrap and registration can be slow when the API server is down. */
import { Watchdog } from '../platform/watchdog';
import type { AgentContext } from './context';

export function startKeepAlives(ctx: AgentContext): void {
  const { cfg, log, notifier, signal, running, health } = ctx;
  // Keep-alives start first: bootstrap and registration can be slow when the API server is down.
  const watchdogInterval = cfg.featureGates.enabled('SystemdWatchdog') ? notifier.watchdogIntervalMs() : undefined;
  const watchdog = new Watchdog({
    notifier,
    intervalMs: watchdogInterval,
    healthy: () => health.healthy(),
    log: log.child({ component: 'watchdog' }),
  });
  running.loops.push(watchdog.run(signal));
  if (watchdogInterval) log.info({ watchdogSec: watchdogInterval / 1000, keepAliveEveryMs: watchdog.periodMs }, 'systemd watchdog enabled');
}
