/**
 * What every start-up phase of svc-node shares (agent/main.ts runs the phases in order): the
 * configuration, the logger, systemd's notifier, the one AbortSignal that SIGTERM/SIGINT aborts,
 * the clock, the agent's own health signal and metrics, and `running`, where each phase leaves the
 * loops it started and the clients and runtime main closes at shutdown.
 */
import type pino from 'pino';
import type { SdNotifier } from '../../common/systemd';
import type { HttpApiClient } from '../client/http-api-client';
import type { AgentConfig } from '../config/load';
import type { RuntimeService } from '../cri';
import type { AgentMetrics } from '../metrics/agent-metrics';
import type { Clock } from '../platform/clock';
import type { HeartbeatHealth } from '../node/heartbeat-health';

/** Per-request deadline; short so one stuck call cannot eat a heartbeat interval. */
export const requestTimeoutMs = 10_000;

/** What main waits for and closes at shutdown. */
export interface Running {
  loops: Promise<unknown>[];
  clients: HttpApiClient[];
  runtime?: RuntimeService;
}

export interface AgentContext {
  cfg: AgentConfig;
  log: pino.Logger;
  notifier: SdNotifier;
  /** Aborted by SIGTERM/SIGINT; every phase stops early when it aborts. */
  signal: AbortSignal;
  clock: Clock;
  running: Running;
  /** The agent's own health (the heartbeat loops make progress), for the watchdog and /healthz. */
  health: HeartbeatHealth;
  metrics: AgentMetrics;
}

/** Resolves when the signal aborts (at once when it already has). */
export function abortPromise(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((r) => signal.addEventListener('abort', () => r(), { once: true }));
}
