/**
 * svc-node's composition root: flags -> config -> start-up checks -> container runtime ->
 * identity -> client -> registration -> heartbeats -> pods and the agent's HTTPS server, with
 * systemd told about each stage. Every long-running part takes the one AbortSignal that
 * SIGTERM/SIGINT aborts; shutdown is bounded.
 */
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { HelpRequested, ConfigError, loadAgentConfig, type AgentConfig } from './config/load';
import { parseQuantity } from './config/quantity';
import { CertStore } from './bootstrap/cert-store';
import { CertificateRotator } from './bootstrap/cert-rotation';
import { CsrDeniedError, CsrRejectedError, CsrTimeoutError } from './bootstrap/request-certificate';
import { BootstrapError, loadOrBootstrapIdentity } from './bootstrap/tls-bootstrap';
import { ClientError } from './client/client-error';
import { HttpApiClient } from './client/http-api-client';
import { TokenBucketLimiter } from './client/request-limiter';
import { KubeconfigError } from './client/kubeconfig';
import type { RestConfig } from './client/rest-config';
import { createRuntimeService, RuntimeHealth, type RuntimeService } from './cri';
import { pluginRegistryRegistrar } from './devices/consumer-adapters';
import { DeviceManager } from './devices/device-manager';
import { RegistrationServer } from './devices/registration-server';
import { startAgentServer } from './server/agent-server';
import { checkpointsDir } from './checkpoint/archive-path';
import type { InFlightArchives } from './checkpoint/checkpoint-handler';
import { CheckpointRetention } from './housekeeping/checkpoint-retention';
import { CronJob } from './housekeeping/cron-job';
import { ContainerLogManager } from './logs';
import { AgentMetrics } from './metrics/agent-metrics';
import { instrumentRuntime } from './metrics/instrumented-runtime';
import { nodeAddresses } from './node/addresses';
import { realClock, type Clock } from './platform/clock';
import { declaredFeatures } from './node/declared-features';
import { HeartbeatHealth } from './node/heartbeat-health';
import { LeaseController } from './node/lease-controller';
import { nodeLabels } from './node/node-object';
import { ProgressTracker } from './node/progress';
import { ReadinessSource } from './node/readiness';
import { NodeRegistrar } from './node/registration';
import { NodeStatusSource } from './node/status-source';
import { NodeStatusUpdater } from './node/status-updater';
import { PodManager } from './pod/pod-manager';
import { PodManagerPods, PodResourcesServer, podResourcesDevices, podResourcesSocketPath } from './podresources';
import { PluginRegistry, pluginRegistryDir } from './pluginregistry';
import { svcVersion } from '../common/version';
import { createLogger } from './platform/logger';
import { readMachineInfo } from './platform/machine';
import { evaluatePressure, observePressure, PressureTracker } from './platform/pressure';
import { prepareHost, StartupError } from './platform/startup-checks';
import { createSdNotifier, type SdNotifier } from '../common/systemd';
import { Watchdog } from './platform/watchdog';
import type pino from 'pino';

/** How long shutdown may take before the process exits anyway. */
const shutdownBoundMs = 10_000;
/** Per-request deadline; short so one stuck call cannot eat a heartbeat interval. */
const requestTimeoutMs = 10_000;
/** The largest heartbeat back-off step (spec 8). */
const maxBackoffMs = 7000;
/**
 * Parent of every pod's cgroup (cgroupfs driver). Upstream's kubelet has cgroupRoot for this; the
 * agent configuration has no such field yet, so it is fixed here.
 */
const podCgroupRoot = '/svc-node';

function abortPromise(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((r) => signal.addEventListener('abort', () => r(), { once: true }));
}

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

interface Running {
  loops: Promise<unknown>[];
  clients: HttpApiClient[];
  runtime?: RuntimeService;
}

/**
 * The agent's life after configuration, up to "heartbeating" (or standalone). Rejects on a start-up failure. `signal` is aborted by
 * SIGTERM/SIGINT; the start-up phases all stop early when it aborts.
 */
async function runAgent(cfg: AgentConfig, log: pino.Logger, notifier: SdNotifier, signal: AbortSignal, clock: Clock, running: Running): Promise<void> {
  const c = cfg.config;
  const nodeName = cfg.nodeName;
  const leaseProgress = new ProgressTracker(clock);
  const statusProgress = new ProgressTracker(clock);
  const health = new HeartbeatHealth({ requestTimeoutMs });
  const metrics = new AgentMetrics();

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

  notifier.status('checking the machine');
  // Lock first (a second agent must touch nothing), then swap, then the root-dir layout.
  const host = await prepareHost({ cfg, log, layoutLog: log.child({ component: 'root-dir' }) });
  if (host.lock) {
    const lock = host.lock;
    running.loops.push(abortPromise(signal).then(() => lock.release()));
  }

  const machine = await readMachineInfo({ rootDir: cfg.flags.rootDir });
  log.info({ cpu: machine.cpuCores, memoryBytes: machine.memoryBytes, kernel: machine.kernelVersion, os: machine.osImage }, 'read machine info');

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

  // Device plugins: the checkpoint is read and stale sockets removed before kubelet.sock is
  // served, so plugins that notice their socket vanished register against this run.
  const deviceDir = path.join(cfg.flags.rootDir, 'device-plugins');
  const devices = new DeviceManager({
    dir: deviceDir,
    clock,
    log: log.child({ component: 'devices' }),
    gracePeriodMs: c.devicePluginGracePeriod,
    admissionWaitMs: c.devicePluginAdmissionWait,
    callTimeoutMs: c.devicePluginCallTimeout,
  });
  await devices.start();
  const registration = new RegistrationServer({ dir: deviceDir, registrar: devices, log: log.child({ component: 'devices' }) });
  try {
    await registration.start();
  } catch (e) {
    throw new StartupError(`cannot serve device plugin registration on ${registration.socketPath}: ${(e as Error).message}`);
  }
  running.loops.push(
    abortPromise(signal).then(async () => {
      await devices.stop();
      await registration.stop();
    }),
  );

  if (!cfg.flags.kubeconfig) {
    log.warn({}, 'no --kubeconfig: running standalone, without registering a node');
    notifier.status('running standalone (no --kubeconfig)');
    notifier.ready();
    return;
  }

  notifier.status('bootstrapping client certificate');
  const store = new CertStore(cfg.flags.certDir);
  const userAgent = `svc-node/${svcVersion()} (linux/${machine.architecture})`;
  // kubeAPIQPS / kubeAPIBurst pace every client but the heartbeat one, as the kubelet's
  // heartbeatClient (QPS -1): a busy pod sync must never delay a Lease renewal.
  const limiter = new TokenBucketLimiter(c.kubeAPIQPS, c.kubeAPIBurst);
  const makeClient = (rc: RestConfig) => new HttpApiClient(rc, { timeoutMs: requestTimeoutMs, userAgent, limiter });
  const identity = await loadOrBootstrapIdentity(
    {
      kubeconfigPath: cfg.flags.kubeconfig,
      bootstrapKubeconfigPath: cfg.flags.bootstrapKubeconfig,
      store,
      nodeName,
      clock,
      log: log.child({ component: 'bootstrap' }),
      makeClient,
    },
    signal,
  );
  log.info({ origin: identity.origin, server: identity.config.server }, 'client identity ready');
  const client = makeClient(identity.config);
  const heartbeatClient = new HttpApiClient(identity.config, { timeoutMs: requestTimeoutMs, userAgent });
  running.clients.push(client, heartbeatClient);

  if (c.rotateCertificates && identity.config.certFile === store.currentPath) {
    const rotator = new CertificateRotator({
      store,
      client,
      clock,
      log: log.child({ component: 'cert-rotation' }),
      nodeName,
      bootstrapKubeconfigPath: cfg.flags.bootstrapKubeconfig,
      makeClient,
      alsoSwap: [heartbeatClient],
    });
    running.loops.push(rotator.run(signal));
  }

  const readiness = new ReadinessSource();
  readiness.add(runtimeHealth);
  const pressureTracker = new PressureTracker({ now: () => clock.now(), transitionPeriodMs: c.evictionPressureTransitionPeriod });
  const status = new NodeStatusSource({
    machine,
    addresses: () => nodeAddresses(nodeName, cfg.flags.nodeIPs),
    pressure: async () => {
      const obs = await observePressure({ rootDir: cfg.flags.rootDir });
      return pressureTracker.update(evaluatePressure(obs, { evictionHard: c.evictionHard, evictionSoft: c.evictionSoft }));
    },
    readiness,
    runtime: runtimeHealth,
    resources: { maxPods: c.maxPods, systemReserved: c.systemReserved, kubeReserved: c.kubeReserved, evictionHard: c.evictionHard },
    svcVersion: svcVersion(),
    declaredFeatures: declaredFeatures(cfg.featureGates),
    port: c.port,
    extendedResources: () => devices.extendedResources(),
  });
  const registrar = new NodeRegistrar({
    client,
    clock,
    log: log.child({ component: 'registration' }),
    identity: { name: nodeName, labels: nodeLabels(nodeName, machine, cfg.flags.nodeLabels), taints: c.registerWithTaints, providerID: c.providerID || undefined },
    status,
    // Re-registration runs inside the status loop, so its retries count as that loop's progress.
    progress: statusProgress,
  });

  if (c.registerNode) {
    notifier.status(`registering node ${nodeName}`);
    log.info({ node: nodeName, server: identity.config.server }, 'registering node');
    if (!(await registrar.register(signal))) return; // aborted
  } else {
    log.info({ node: nodeName }, 'registerNode is false: not creating the Node; heartbeating an existing one');
  }

  // A half-open connection must not swallow heartbeats (kubelet: closeAllConns); the main
  // client's watches reconnect by themselves after a redial.
  const redial = async () => {
    await Promise.all([heartbeatClient.redial(), client.redial()]);
  };
  const lease = new LeaseController({
    client: heartbeatClient,
    clock,
    log: log.child({ component: 'node-lease' }),
    nodeName,
    leaseDurationSeconds: c.nodeLeaseDurationSeconds,
    nodeUid: () => registrar.nodeUid,
    onRepeatedFailure: redial,
    progress: leaseProgress,
    observer: metrics,
  });
  const updater = new NodeStatusUpdater({
    client: heartbeatClient,
    clock,
    log: log.child({ component: 'node-status' }),
    nodeName,
    status,
    updateFrequencyMs: c.nodeStatusUpdateFrequency,
    reportFrequencyMs: c.nodeStatusReportFrequency,
    reregister: c.registerNode ? (s) => registrar.register(s) : undefined,
    onRepeatedFailure: redial,
    progress: statusProgress,
    observer: metrics,
  });
  // A renewal makes at most three calls (update, get, update); a status sync two (get, patch).
  health.track({ progress: leaseProgress, periodMs: Math.max(lease.renewIntervalMs * 1.04, maxBackoffMs), requestsPerAttempt: 3, minStuckMs: c.nodeLeaseDurationSeconds * 1000 });
  health.track({ progress: statusProgress, periodMs: c.nodeStatusUpdateFrequency, requestsPerAttempt: 2 });
  running.loops.push(lease.run(signal), updater.run(signal));

  const hostIPs = () => nodeAddresses(nodeName, cfg.flags.nodeIPs).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  const pods = new PodManager({
    client,
    runtime,
    clock,
    log: log.child({ component: 'pods' }),
    nodeName,
    nodeUid: () => registrar.nodeUid,
    hostIPs,
    nodeCpuMilli: machine.cpuCores * 1000,
    nodeMemoryBytes: machine.memoryBytes,
    rootDir: cfg.flags.rootDir,
    podLogsDir: c.podLogsDir,
    staticPodPath: c.staticPodPath,
    fileCheckFrequencyMs: c.fileCheckFrequency,
    syncFrequencyMs: c.syncFrequency,
    runtimeRequestTimeoutMs: c.runtimeRequestTimeout,
    serializeImagePulls: c.serializeImagePulls,
    seccompDefault: c.seccompDefault,
    cgroupDriver: c.cgroupDriver,
    cgroupRoot: podCgroupRoot,
    // The simulator creates no cgroups; an agent on it must not touch the host's.
    cleanCgroups: !c.containerRuntimeEndpoint.startsWith('sim://'),
    clusterDNS: c.clusterDNS,
    clusterDomain: c.clusterDomain,
    imageGC: { highThresholdPercent: c.imageGCHighThresholdPercent, lowThresholdPercent: c.imageGCLowThresholdPercent, minAgeMs: c.imageMinimumGCAge },
    devices,
  });
  running.loops.push(pods.run(signal));
  // Pod resources API (upstream: ListenAndServePodResources; failing to serve it is fatal there too).
  const podResources = new PodResourcesServer({
    socketPath: podResourcesSocketPath(cfg.flags.rootDir),
    pods: new PodManagerPods(pods),
    devices: podResourcesDevices(devices),
    log: log.child({ component: 'pod-resources' }),
  });
  try {
    await podResources.start();
  } catch (e) {
    throw new StartupError(`cannot serve the pod resources API on ${podResourcesSocketPath(cfg.flags.rootDir)}: ${(e as Error).message}`);
  }
  running.loops.push(abortPromise(signal).then(() => podResources.close()));
  // Plugin registry (plugins_registry/): device plugins registering there join the device manager
  // like those calling kubelet.sock.
  const pluginRegistry = new PluginRegistry({
    dir: pluginRegistryDir(cfg.flags.rootDir),
    registrar: pluginRegistryRegistrar(devices),
    clock,
    log: log.child({ component: 'plugin-registry' }),
  });
  running.loops.push(pluginRegistry.run(signal));
  let archives: InFlightArchives = { inFlight: () => new Set() };
  if (c.enableServer) {
    const started = await startAgentServer({
      cfg,
      kubeconfigCaPem: identity.config.caPem,
      client,
      runtime,
      pods,
      clock,
      ips: hostIPs(),
      log: log.child({ component: 'agent-server' }),
      metrics,
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
  await Promise.race([lease.whenFirstRenewed(), abortPromise(signal)]);
  if (signal.aborted) return;
  notifier.status(`heartbeating (node ${nodeName})`);
  notifier.ready();
  log.info({ node: nodeName, leaseDurationSeconds: c.nodeLeaseDurationSeconds, renewEveryMs: lease.renewIntervalMs }, 'node registered and heartbeating');
}

/** Runs the agent; resolves the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let cfg: AgentConfig;
  const EX_CONFIG = 78;
  try {
    cfg = await loadAgentConfig(argv);
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
    await runAgent(cfg, log, notifier, ac.signal, realClock, running);
    await abortPromise(ac.signal);
  } catch (e) {
    if (!(ac.signal.aborted && (e as Error)?.name === 'AbortError')) {
      code = 1;
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
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
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
