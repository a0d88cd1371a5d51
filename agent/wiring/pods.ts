/**
 * Start-up phase 7: pods. The pod manager (it starts pods once the runtime answers), the pod
 * resources API over it and the device manager, and the plugin registry that brings device
 * plugins announced in plugins_registry/ to the device manager.
 */
import { pluginRegistryRegistrar } from '../devices/consumer-adapters';
import type { DeviceManager } from '../devices/device-manager';
import type { RuntimeService } from '../cri';
import type { MachineInfo } from '../platform/machine';
import { StartupError } from '../platform/startup-checks';
import { PluginRegistry, pluginRegistryDir } from '../pluginregistry';
import { PodManager } from '../pod/pod-manager';
import { LocalPathCleaner } from '../pod/local-path-cleaner';
import { PodManagerPods, PodResourcesServer, podResourcesDevices, podResourcesSocketPath } from '../podresources';
import type { EventRecorder } from '../../common/events/recorder';
import type { HttpApiClient } from '../client/http-api-client';
import { abortPromise, type AgentContext } from './context';
import { hostResolverReader } from './dns';

/**
 * Parent of every pod's cgroup (cgroupfs driver). Upstream's kubelet has cgroupRoot for this; the
 * agent configuration has no such field yet, so it is fixed here.
 */
const podCgroupRoot = '/svc-node';

export interface PodParts {
  client: HttpApiClient;
  runtime: RuntimeService;
  machine: MachineInfo;
  devices: DeviceManager;
  /** The registered Node's uid (owner of mirror pods), once known. */
  nodeUid: () => string | undefined;
  /** The node's InternalIPs, primary first. */
  hostIPs: () => string[];
  /** The agent's event recorder. */
  recorder: EventRecorder;
}

export async function startPods(ctx: AgentContext, p: PodParts): Promise<PodManager> {
  const { cfg, log, signal, clock, running } = ctx;
  const c = cfg.config;
  const { client, runtime, machine, devices } = p;
  const pods = new PodManager({
    client,
    runtime,
    clock,
    log: log.child({ component: 'pods' }),
    nodeName: cfg.nodeName,
    nodeUid: p.nodeUid,
    hostIPs: p.hostIPs,
    nodeCpuMilli: machine.cpuCores * 1000,
    nodeMemoryBytes: machine.memoryBytes,
    rootDir: cfg.flags.rootDir,
    podLogsDir: c.podLogsDir,
    localPathDir: c.localPathDir,
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
    hostDns: hostResolverReader(c.resolvConf, log.child({ component: 'pods' })),
    imageGC: { highThresholdPercent: c.imageGCHighThresholdPercent, lowThresholdPercent: c.imageGCLowThresholdPercent, minAgeMs: c.imageMinimumGCAge },
    devices,
    recorder: p.recorder,
  });
  running.loops.push(pods.run(signal));
  // Directories of deleted local-path volumes on this node (svc-apiserver's provisioner).
  const localPath = new LocalPathCleaner({ client, nodeName: cfg.nodeName, baseDir: c.localPathDir, clock, log: log.child({ component: 'local-path' }), recorder: p.recorder });
  running.loops.push(localPath.run(signal));
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
  return pods;
}
