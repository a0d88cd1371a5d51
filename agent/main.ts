/**
 * svc-node's composition root: flags -> config -> start-up checks -> container runtime ->
 * identity -> client -> registration -> heartbeats -> pods and the agent's HTTPS server, with
 * systemd told about each stage. Each stage is a named phase in agent/wiring/ (one file each);
 * runAgent runs them in order. Every long-running part takes the one AbortSignal that
 * SIGTERM/SIGINT aborts; shutdown is bounded.
 */
import { setMaxListeners } from 'node:events';
import { terminalColumns } from '../common/flag-usage';
import { HelpRequested, ConfigError, loadAgentConfig, type AgentConfig } from './config/load';
import { CsrDeniedError, CsrRejectedError, CsrTimeoutError } from './bootstrap/request-certificate';
import { BootstrapError } from './bootstrap/tls-bootstrap';
import { ClientError } from './client/client-error';
import { KubeconfigError } from './client/kubeconfig';
import { AgentMetrics } from './metrics/agent-metrics';
import { nodeAddresses } from './node/addresses';
import { realClock } from './platform/clock';
import { HeartbeatHealth } from './node/heartbeat-health';
import { svcVersion } from '../common/version';
import { createLogger } from './platform/logger';
import { StartupError } from './platform/startup-checks';
import { createSdNotifier, type SdNotifier } from '../common/systemd';
import { abortPromise, requestTimeoutMs, type AgentContext, type Running } from './wiring/context';
import { bootstrapCredentials } from './wiring/credentials';
import { startDevices } from './wiring/devices';
import { startClusterDns } from './wiring/dns';
import { startEvents } from './wiring/events';
import { checkHost } from './wiring/host';
import { startKeepAlives } from './wiring/keep-alives';
import { startNodeController } from './wiring/node';
import { startPods } from './wiring/pods';
import { planProxy, startProxy } from './wiring/proxy';
import { startNetworkPolicy } from './wiring/netpol';
import { ensureBridgedTrafficFiltered, startPodNetwork } from './wiring/podnet';
import { connectRuntime } from './wiring/runtime';
import { startServer } from './wiring/server';

/** How long shutdown may take before the process exits anyway. */
const shutdownBoundMs = 10_000;

/** Errors whose message is the whole story (operator-facing); anything else is a bug and is logged with its stack. */
function isExpected(e: unknown): e is Error {
  return (
    e instanceof StartupError ||
    e instanceof KubeconfigError ||
    e instanceof BootstrapError ||
    e instanceof CsrDeniedError ||
    e instanceof CsrRejectedError ||
    e instanceof CsrTimeoutError ||
    e instanceof ClientError
  );
}

/**
 * The agent's life after configuration, up to "heartbeating" (or standalone): the phases of
 * agent/wiring/ in order. Rejects on a start-up failure. `ctx.signal` is aborted by
 * SIGTERM/SIGINT; the start-up phases all stop early when it aborts.
 */
async function runAgent(ctx: AgentContext): Promise<void> {
  const { cfg, log, notifier, signal } = ctx;
  const nodeName = cfg.nodeName;
  startKeepAlives(ctx);
  const machine = await checkHost(ctx);
  const { runtime, runtimeHealth } = connectRuntime(ctx);
  const devices = await startDevices(ctx);
  // Before registering: a proxy.mode this node cannot run stops it before it joins the cluster.
  const proxyPlan = cfg.flags.kubeconfig ? await planProxy(ctx) : undefined;
  if (!cfg.flags.kubeconfig) {
    log.warn({}, 'no --kubeconfig: running standalone, without registering a node');
    notifier.status('running standalone (no --kubeconfig)');
    notifier.ready();
    return;
  }
  const credentials = await bootstrapCredentials(ctx, machine);
  const recorder = startEvents(ctx, credentials.eventClient);
  const started = await startNodeController(ctx, { machine, runtimeHealth, devices, credentials, recorder });
  if (!started) return; // aborted during registration
  const { node, readiness } = started;
  const hostIPs = () => nodeAddresses(nodeName, cfg.flags.nodeIPs).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  await startClusterDns(ctx, credentials.client);
  startPodNetwork(ctx, { client: credentials.client, hostIPs });
  const pods = await startPods(ctx, { client: credentials.client, runtime, machine, devices, nodeUid: () => node.nodeUid, hostIPs, recorder });
  const proxy = startProxy(ctx, credentials.client, proxyPlan);
  const netpol = startNetworkPolicy(ctx, credentials.client);
  if (proxy || netpol) await ensureBridgedTrafficFiltered(ctx);
  await startServer(ctx, { identity: credentials.identity, client: credentials.client, runtime, pods, readiness, hostIPs, recorder, proxy, netpol });
  await Promise.race([node.whenFirstRenewed(), abortPromise(signal)]);
  if (signal.aborted) return;
  notifier.status(`heartbeating (node ${nodeName})`);
  notifier.ready();
  log.info({ node: nodeName, leaseDurationSeconds: cfg.config.nodeLeaseDurationSeconds, renewEveryMs: node.renewIntervalMs }, 'node registered and heartbeating');
}

/** Runs the agent; resolves the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let cfg: AgentConfig;
  const EX_CONFIG = 78;
  try {
    cfg = await loadAgentConfig(argv, { helpColumns: terminalColumns() });
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(e.text.endsWith('\n') ? e.text : e.text + '\n');
      return 0;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`svc-node: ${e.message}\n`);
      // EX_CONFIG (78): the unit's RestartPreventExitStatus=78 keeps a broken configuration from
      // hiding in a restart loop; other start-up failures exit 1 and are retried.
      return EX_CONFIG;
    }
    throw e;
  }
  const log = createLogger({ level: cfg.logLevel });
  for (const w of cfg.warnings) log.warn({}, w);
  log.info({ version: svcVersion(), node: cfg.nodeName, sources: cfg.sources }, 'starting svc-node');

  let notifier: SdNotifier;
  try {
    notifier = createSdNotifier({ log });
  } catch (e) {
    log.error({ error: (e as Error).message }, 'cannot talk to systemd');
    return 1;
  }

  const ac = new AbortController();
  // Every loop, pod worker and in-flight runtime call listens on this one signal.
  setMaxListeners(0, ac.signal);
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) return;
    log.info({ signal: sig }, 'shutting down');
    notifier.stopping();
    ac.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  // Sockets and timers come and go (and the lock's socket is unref'd); this keeps the process up until shutdown.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const running: Running = { loops: [], clients: [] };
  let code = 0;
  try {
    const ctx: AgentContext = { cfg, log, notifier, signal: ac.signal, clock: realClock, running, health: new HeartbeatHealth({ requestTimeoutMs }), metrics: new AgentMetrics() };
    await runAgent(ctx);
    await abortPromise(ac.signal);
  } catch (e) {
    if (!(ac.signal.aborted && (e as Error)?.name === 'AbortError')) {
      // A configuration found wrong only at start-up (proxy.mode the node cannot run) is EX_CONFIG too.
      code = e instanceof ConfigError ? EX_CONFIG : 1;
      if (e instanceof ConfigError) process.stderr.write(`svc-node: ${e.message}\n`);
      const message = e instanceof Error ? e.message : String(e);
      notifier.status(`start-up failed: ${message}`);
      if (isExpected(e)) log.error({ error: message }, 'svc-node cannot start');
      else log.error({ err: e }, 'svc-node failed unexpectedly');
    }
    if (!ac.signal.aborted) {
      notifier.stopping();
      ac.abort();
    }
  }

  // Shutdown: the loops see the abort; give them a bounded time to finish their current call.
  const bound = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), shutdownBoundMs).unref());
  const finished = await Promise.race([Promise.allSettled(running.loops).then(() => 'done' as const), bound]);
  if (finished === 'timeout') log.warn({ boundMs: shutdownBoundMs }, 'loops did not stop in time; exiting anyway');
  await Promise.all(running.clients.map((c) => c.close()));
  running.runtime?.close();
  clearInterval(keepAlive);
  // The signal handlers stay until the process exits: a second signal arriving after this point
  // (the terminal's SIGINT to the whole group, then the quick start's SIGTERM) must not kill the
  // process with the signal's default action (exit by SIGTERM) just before it exits 0.
  log.info({ code }, 'svc-node stopped');
  return code;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`svc-node: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
