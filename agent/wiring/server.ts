/**
 * Start-up phase 8: the agent's HTTPS server (kubelet's :10250, when enableServer) with its health
 * checks, and the checkpoint retention schedule, which spares the archives the server is writing.
 */
import type { EventRecorder } from '../../common/events/recorder';
import type { ClientIdentity } from '../bootstrap/tls-bootstrap';
import { checkpointsDir } from '../checkpoint/archive-path';
import type { InFlightArchives } from '../checkpoint/checkpoint-handler';
import type { HttpApiClient } from '../client/http-api-client';
import type { RuntimeService } from '../cri';
import { CheckpointRetention } from '../housekeeping/checkpoint-retention';
import { CronJob } from '../housekeeping/cron-job';
import type { ReadinessSource } from '../node/readiness';
import type { PodManager } from '../pod/pod-manager';
import { startAgentServer } from '../server/agent-server';
import { realStatFs } from '../platform/host-fs';
import { SummaryProvider } from '../stats/summary-provider';
import { uptime } from 'node:os';
import { join } from 'node:path';
import type { AgentContext } from './context';

export interface ServerParts {
  identity: ClientIdentity;
  client: HttpApiClient;
  runtime: RuntimeService;
  pods: PodManager;
  readiness: ReadinessSource;
  /** The node's InternalIPs, primary first. */
  hostIPs: () => string[];
  /** The agent's event recorder. */
  recorder: EventRecorder;
  /** The network proxy, when it runs: its freshness is a /readyz check. */
  proxy?: { health(): string | undefined };
  /** NetworkPolicy enforcement, when it runs: its freshness is a /readyz check. */
  netpol?: { health(): string | undefined };
}

export async function startServer(ctx: AgentContext, p: ServerParts): Promise<void> {
  const { cfg, log, signal, clock, running, health, metrics } = ctx;
  const c = cfg.config;
  const { readiness } = p;
  let archives: InFlightArchives = { inFlight: () => new Set() };
  if (c.enableServer) {
    const stats = new SummaryProvider({
      runtime: p.runtime,
      clock,
      nodeName: cfg.nodeName,
      rootDir: cfg.flags.rootDir,
      podsDir: join(cfg.flags.rootDir, 'pods'),
      statfs: realStatFs,
      bootTimeMs: clock.now() - Math.round(uptime() * 1000),
    });
    running.loops.push(stats.run(signal));
    const started = await startAgentServer({
      cfg,
      kubeconfigCaPem: p.identity.config.caPem,
      client: p.client,
      runtime: p.runtime,
      pods: p.pods,
      clock,
      ips: p.hostIPs(),
      log: log.child({ component: 'agent-server' }),
      metrics,
      events: { recorder: p.recorder, podByName: (ns, name) => p.pods.podByName(ns, name) },
      stats,
      health: {
        live: [
          { name: 'ping', check: () => undefined },
          // Upstream's syncloop check; ours asks whether the heartbeat loops keep making progress.
          { name: 'syncloop', check: () => (health.healthy() ? undefined : 'the heartbeat loops have made no progress') },
        ],
        ready: [
          {
            name: 'node',
            check: async () => {
              const r = await readiness.evaluate();
              return r.ready ? undefined : r.problems.join('; ');
            },
          },
          ...(p.proxy ? [{ name: 'proxy', check: () => p.proxy?.health() }] : []),
          ...(p.netpol ? [{ name: 'netpol', check: () => p.netpol?.health() }] : []),
        ],
      },
    });
    if (started) {
      running.loops.push(started.server.run(signal), started.rotator.run(signal));
      archives = started.checkpoints;
    }
  }
  const retention = c.checkpointRetention;
  if (retention.schedule !== '' && (retention.maxPerContainer > 0 || retention.maxAge > 0)) {
    const policy = new CheckpointRetention({
      dir: checkpointsDir(cfg.flags.rootDir),
      policy: { maxPerContainer: retention.maxPerContainer, maxAgeMs: retention.maxAge },
      now: () => clock.now(),
      inFlight: archives,
      log: log.child({ component: 'checkpoint-retention' }),
      onRemoved: (n) => metrics.archivesRemoved(n),
    });
    running.loops.push(new CronJob({ name: 'checkpoint-retention', schedule: retention.schedule, task: () => policy.runOnce(), log: log.child({ component: 'housekeeping' }) }).run(signal));
  }
}
