/**
 * Start-up phase 3: the container runtime. Dialled lazily; its health (Status every 5 s) feeds the
 * node's Ready condition; every CRI call is counted in the metrics; container logs are rotated at
 * containerLogMaxSize.
 */
import { parseQuantity } from '../config/quantity';
import { createRuntimeService, RuntimeHealth, type RuntimeService } from '../cri';
import { ContainerLogManager } from '../logs';
import { instrumentRuntime } from '../metrics/instrumented-runtime';
import { StartupError } from '../platform/startup-checks';
import type { AgentContext } from './context';

export interface ConnectedRuntime {
  runtime: RuntimeService;
  runtimeHealth: RuntimeHealth;
}

export function connectRuntime(ctx: AgentContext): ConnectedRuntime {
  const { cfg, log, signal, clock, running, metrics } = ctx;
  const c = cfg.config;
  // The runtime is dialled lazily; its health (Status every 5 s) feeds the node's Ready condition.
  let runtime: RuntimeService;
  try {
    runtime = instrumentRuntime(createRuntimeService(c.containerRuntimeEndpoint, c.imageServiceEndpoint, { timeoutMs: c.runtimeRequestTimeout }), metrics);
  } catch (e) {
    throw new StartupError((e as Error).message);
  }
  running.runtime = runtime;
  const runtimeHealth = new RuntimeHealth(runtime, { clock });
  running.loops.push(runtimeHealth.run(signal));
  log.info({ endpoint: c.containerRuntimeEndpoint, imageEndpoint: c.imageServiceEndpoint }, 'using container runtime');
  // With containerd and CRI-O the agent, not the runtime, keeps container logs in bounds. The
  // simulator writes real log files too (and reopens them), so it gets the same loop.
  if (c.containerLogMaxSize !== '') {
    const logRotation = new ContainerLogManager({
      runtime,
      clock,
      log: log.child({ component: 'container-logs' }),
      maxSizeBytes: Math.ceil(parseQuantity(c.containerLogMaxSize)),
      maxFiles: c.containerLogMaxFiles,
      intervalMs: c.containerLogMonitorInterval,
    });
    running.loops.push(logRotation.run(signal));
  } else {
    log.info({}, 'containerLogMaxSize is empty: container logs are not rotated');
  }
  return { runtime, runtimeHealth };
}
