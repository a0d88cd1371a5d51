/**
 * The agent's pod machinery in one place (upstream: the kubelet's syncLoop and what hangs off
 * it): the merged pod sources (./pod-sources: API pods bound to this node, static pods, mirror
 * pods) feed one worker per pod, behind node admission (./node-admission-gate); the PLEG and probe
 * results wake workers; the status manager writes pod status; the periodic loops
 * (./periodic-loops) run housekeeping, image GC and the node refresh; ./pod-log-lookup finds
 * container logs. Built by main.ts from the agent configuration; `run(signal)` starts everything
 * once the runtime answers.
 */
import type { ResolverConfig } from '../dns/resolv-conf';
import path from 'node:path';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import type { ApiClient } from '../client/api-client';
import type { RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { SeccompResolver } from '../seccomp/resolve';
import { ApiConfigObjects, type ConfigObjectGetter } from './config-objects';
import { ApiRuntimeClasses, type RuntimeHandlerLookup } from './runtime-classes';
import type { DiskUsage } from './image-gc';
import { ImageManager } from './image-manager';
import { NodeAdmissionGate } from './node-admission-gate';
import { PeriodicLoops } from './periodic-loops';
import { Pleg } from './pleg';
import { PodCgroups } from './pod-cgroups';
import { podRef } from './pod-events';
import { PodLogLookup, type ContainerLogLocation } from './pod-log-lookup';
import { PodSources } from './pod-sources';
import { PodSyncer, type DeviceAllocator } from './pod-sync';
import type { Pod } from '../api/core-v1';
import { PodWorker } from './pod-worker';
import { ProbeManager } from './probe-manager';
import { DefaultProber, type Prober } from './prober';
import { PullRecords } from './pull-records';
import { ApiPodDeleter, StatusManager, type PodDeleter } from './status-manager';
import { ApiTokenRequester, TokenManager } from './token-manager';
import { ApiClaims } from './volume-pvc';
import { VolumeManager } from './volumes';

export interface PodManagerOptions {
  client: ApiClient;
  runtime: RuntimeService;
  clock: Clock;
  log: Log;
  nodeName: string;
  /** The Node's UID once registered (owner of mirror pods). */
  nodeUid: () => string | undefined;
  /** The node's InternalIPs, primary first. */
  hostIPs: () => string[];
  nodeCpuMilli: number;
  nodeMemoryBytes: number;
  /** --root-dir: pods/, seccomp/ and image_manager/ live under it. */
  rootDir: string;
  podLogsDir: string;
  /** localPathDir of the configuration: local-path volumes' directories (absent: such volumes fail). */
  localPathDir?: string;
  /** '' disables static pods. */
  staticPodPath: string;
  fileCheckFrequencyMs: number;
  syncFrequencyMs: number;
  runtimeRequestTimeoutMs: number;
  serializeImagePulls: boolean;
  seccompDefault: boolean;
  cgroupDriver: 'cgroupfs' | 'systemd';
  /** Parent of the pods' cgroups ("/svc-node"). */
  cgroupRoot: string;
  /** Remove pod cgroups the runtime leaves behind (default true; false for the simulator, which makes none). */
  cleanCgroups?: boolean;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The node's resolver configuration for host-DNS pods (agent/dns/resolv-conf.ts); unset: the runtime copies the node's. */
  hostDns?: () => Promise<ResolverConfig | undefined>;
  imageGC: { highThresholdPercent: number; lowThresholdPercent: number; minAgeMs: number };
  /** Seams for tests; defaults are the real ones. */
  prober?: Prober;
  objects?: ConfigObjectGetter;
  runtimeClasses?: RuntimeHandlerLookup;
  deleter?: PodDeleter;
  cgroupFsRoot?: string;
  diskUsage?: (mountpoint: string) => Promise<DiskUsage | undefined>;
  /** PLEG relist period (default 1 s), housekeeping period (default 10 s), image GC period (default 5 min), mirror reconcile period (default 10 s). */
  relistPeriodMs?: number;
  housekeepingPeriodMs?: number;
  imageGcPeriodMs?: number;
  mirrorPeriodMs?: number;
  /** Deadline of the image pull (default 10 min). */
  pullTimeoutMs?: number;
  /**
   * Device plugins' devices (DeviceManager); retainPods frees the devices of pods that are no
   * longer known, once the pod sources have synced.
   */
  devices?: DeviceAllocator & {
    retainPods(active: ReadonlySet<string>): Promise<void>;
    /** Rebuilds allocations from the runtime's containers when the checkpoint was lost (no-op otherwise). */
    recoverFromRuntime(runtime: RuntimeService, signal?: AbortSignal): Promise<number>;
  };
  /** Allocatable pods for admission until the Node object has been read (default 110, the kubelet's maxPods). */
  maxPods?: number;
  /** How often the Node object is read again for admission (default 10 s). */
  nodeRefreshPeriodMs?: number;
  /** Where pod and container events go (the agent's recorder, reporting as kubelet); default none. */
  recorder?: EventRecorder;
}

/**
 * How long the node's IPs are reused. Reading them (os.networkInterfaces) was the largest single
 * CPU cost of a pod sync in the pod-startup bench; an address change reaches pods within this.
 */
const HOST_IPS_TTL_MS = 5000;

/** fn's result, recomputed at most once per ttlMs. */
function cachedFor<T>(fn: () => T, ttlMs: number, now: () => number): () => T {
  let at = -Infinity;
  let value: T;
  return () => {
    const t = now();
    if (t - at >= ttlMs || t < at) {
      value = fn();
      at = t;
    }
    return value;
  };
}


export class PodManager {
  private readonly workers = new Map<string, PodWorker>();
  private readonly workerRuns = new Set<Promise<void>>();
  private readonly sources: PodSources;
  private readonly admission: NodeAdmissionGate;
  private readonly logs: PodLogLookup;
  private readonly status: StatusManager;
  private readonly probes: ProbeManager;
  private readonly volumes: VolumeManager;
  private readonly cgroups: PodCgroups;
  private readonly records: PullRecords;
  private readonly pleg: Pleg;
  private readonly objects: ConfigObjectGetter;
  private runtimeName = 'unknown';
  private syncer: PodSyncer | undefined;
  private loops: PeriodicLoops | undefined;
  private signal: AbortSignal | undefined;

  /** o.hostIPs, remembered for HOST_IPS_TTL_MS (it reads every interface; a sync asks several times). */
  private readonly hostIPs: () => string[];

  constructor(private readonly o: PodManagerOptions) {
    const log = o.log;
    this.hostIPs = cachedFor(o.hostIPs, HOST_IPS_TTL_MS, () => o.clock.now());
    this.sources = new PodSources({
      client: o.client,
      nodeName: o.nodeName,
      nodeUid: o.nodeUid,
      clock: o.clock,
      log,
      staticPodPath: o.staticPodPath,
      fileCheckFrequencyMs: o.fileCheckFrequencyMs,
      ...(o.mirrorPeriodMs !== undefined ? { mirrorPeriodMs: o.mirrorPeriodMs } : {}),
      events: {
        gone: (uid, fromApi) => this.gone(uid, fromApi),
        staticPod: (pod) => this.ensureWorker(pod, false),
        apiPod: (pod) => this.apiPod(pod),
      },
    });
    this.admission = new NodeAdmissionGate({
      client: o.client,
      clock: o.clock,
      log,
      nodeName: o.nodeName,
      nodeCpuMilli: o.nodeCpuMilli,
      nodeMemoryBytes: o.nodeMemoryBytes,
      ...(o.maxPods !== undefined ? { maxPods: o.maxPods } : {}),
      admitted: () => this.admittedPods(),
      onReject: (pod, status) => {
        // Upstream's rejectPod: a Warning event with the admission reason and message (OutOfcpu, NodeAffinity, ...).
        (o.recorder ?? NOOP_RECORDER).event(podRef(pod), 'Warning', status.reason ?? 'Rejected', status.message ?? '');
        this.status.set(pod, status);
      },
    });
    this.logs = new PodLogLookup({
      runtime: o.runtime,
      runtimeRequestTimeoutMs: o.runtimeRequestTimeoutMs,
      podByName: (namespace, name) => this.podByName(namespace, name),
      runtimePods: () => this.syncer,
    });
    this.status = new StatusManager({
      client: o.client,
      deleter: o.deleter ?? new ApiPodDeleter(o.client),
      clock: o.clock,
      log,
      apiPod: (p) => this.sources.apiPodRef(p),
    });
    this.probes = new ProbeManager({
      prober: o.prober ?? new DefaultProber(o.runtime),
      clock: o.clock,
      log,
      onChange: (uid) => this.workers.get(uid)?.kick(),
      ...(o.recorder ? { recorder: o.recorder } : {}),
    });
    const objects = o.objects ?? new ApiConfigObjects(o.client);
    this.volumes = new VolumeManager({
      podsDir: path.join(o.rootDir, 'pods'),
      objects,
      now: () => o.clock.now(),
      tokens: new TokenManager({ requester: new ApiTokenRequester(o.client), now: () => o.clock.now() }),
      claims: new ApiClaims(o.client),
      nodeAllocatable: () => ({ cpuMilli: o.nodeCpuMilli, memory: o.nodeMemoryBytes }),
      ...(o.localPathDir ? { localPathDir: o.localPathDir } : {}),
    });
    this.cgroups = new PodCgroups({ driver: o.cgroupDriver, root: o.cgroupRoot, clean: o.cleanCgroups ?? true, ...(o.cgroupFsRoot ? { fsRoot: o.cgroupFsRoot } : {}) });
    this.records = new PullRecords(path.join(o.rootDir, 'image_manager'), () => o.clock.now());
    this.pleg = new Pleg({ runtime: o.runtime, clock: o.clock, log, periodMs: o.relistPeriodMs ?? 1000, timeoutMs: o.runtimeRequestTimeoutMs, onChange: (uid) => this.workers.get(uid)?.kick() });
    this.objects = objects;
  }

  /** True once every source delivered its first full set. */
  get sourcesReady(): boolean {
    return this.sources.synced;
  }

  /** UIDs of the pods with a worker (running or terminating). */
  get workerUids(): string[] {
    return [...this.workers.keys()];
  }

  /**
   * Pods with a worker that are not terminated (upstream GetActivePods): a finished worker or a
   * terminal phase (the status manager's latest, else the object's) leaves a pod out.
   */
  activePods(): Pod[] {
    const out: Pod[] = [];
    for (const w of this.workers.values()) {
      if (w.phase === 'finished') continue;
      const phase = this.status.get(w.uid)?.phase ?? w.spec.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      out.push(w.spec);
    }
    return out;
  }

  /** Every pod a worker runs or terminates, with the status last computed for it (the agent's /pods endpoint). */
  runningPods(): Pod[] {
    return [...this.workers.values()].map((w) => {
      const status = this.status.get(w.spec.metadata.uid ?? '');
      return status ? { ...w.spec, status } : w.spec;
    });
  }

  /** The pod a worker runs, by namespace and name (a static pod by its node-suffixed name). */
  podByName(namespace: string, name: string): Pod | undefined {
    for (const w of this.workers.values()) if (w.spec.metadata.namespace === namespace && w.spec.metadata.name === name) return w.spec;
    return undefined;
  }

  /**
   * Starts everything once the runtime answers Version (retrying while it does not) and runs until
   * the signal aborts. Never rejects.
   */
  async run(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    if (!(await this.connectRuntime(signal))) return;
    await this.startRuntimeSide(signal);
    // Admission needs the node's labels, taints and allocatable; the pods wait for one attempt.
    await this.admission.refreshNode(signal);
    // Changes that arrived before the runtime was up.
    this.sources.open();
    const loops = [this.sources.run(signal), this.pleg.run(signal), this.status.run(signal)];
    // The periodic loops exist once startRuntimeSide built them.
    if (this.loops) loops.push(this.loops.run(signal));
    await Promise.allSettled(loops);
    // Workers see the same abort; wait for them to end their current call.
    await Promise.allSettled([...this.workerRuns]);
  }

  /** Waits for the runtime to answer Version, retrying with back-off; false when the signal aborted first. */
  private async connectRuntime(signal: AbortSignal): Promise<boolean> {
    const log = this.o.log;
    for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, 30_000)) {
      try {
        const v = await this.o.runtime.connect({ signal });
        this.runtimeName = v.runtimeName;
        log.info({ runtime: v.runtimeName, version: v.runtimeVersion, apiVersion: v.runtimeApiVersion }, 'connected to the container runtime');
        break;
      } catch (e) {
        if (signal.aborted) return false;
        log.warn({ error: (e as Error).message, retryInMs: delay }, 'container runtime not available yet');
        await this.o.clock.sleep(delay, signal);
      }
    }
    return !signal.aborted;
  }

  /** With the runtime up: settles unfinished pulls, recovers device allocations, builds the syncer and the periodic loops. */
  private async startRuntimeSide(signal: AbortSignal): Promise<void> {
    const log = this.o.log;
    const callTimeoutMs = this.o.runtimeRequestTimeoutMs;
    const images = new ImageManager({
      runtime: this.o.runtime,
      clock: this.o.clock,
      records: this.records,
      log,
      serialize: this.o.serializeImagePulls,
      callTimeoutMs,
      pullTimeoutMs: this.o.pullTimeoutMs ?? 10 * 60_000,
      ...(this.o.recorder ? { recorder: this.o.recorder } : {}),
    });
    const recovered = await this.records
      .recover(async (image) => (await this.o.runtime.imageStatus({ image }, false, { timeoutMs: callTimeoutMs, signal })).image?.id)
      .catch(() => 0);
    if (recovered > 0) log.info({ intents: recovered }, 'settled image pulls an earlier run left unfinished');
    // Before any pod is admitted: pods still running keep the devices their containers hold.
    await this.o.devices?.recoverFromRuntime(this.o.runtime, signal).catch((e: Error) => log.warn({ error: e.message }, 'cannot rebuild device allocations from the runtime'));
    this.syncer = new PodSyncer({
      runtime: this.o.runtime,
      runtimeName: this.runtimeName,
      clock: this.o.clock,
      log,
      images,
      volumes: this.volumes,
      seccomp: new SeccompResolver({ profileRoot: path.join(this.o.rootDir, 'seccomp'), seccompDefault: this.o.seccompDefault }),
      probes: this.probes,
      objects: this.objects,
      runtimeClasses: this.o.runtimeClasses ?? new ApiRuntimeClasses(this.o.client, this.o.clock),
      cgroups: this.cgroups,
      node: { name: this.o.nodeName, hostIPs: this.hostIPs, cpuMilli: this.o.nodeCpuMilli, memoryBytes: this.o.nodeMemoryBytes },
      podLogsDir: this.o.podLogsDir,
      clusterDNS: this.o.clusterDNS,
      clusterDomain: this.o.clusterDomain,
      ...(this.o.hostDns ? { hostDns: this.o.hostDns } : {}),
      callTimeoutMs,
      ...(this.o.devices ? { devices: this.o.devices } : {}),
      ...(this.o.recorder ? { recorder: this.o.recorder } : {}),
    });
    const devices = this.o.devices;
    this.loops = new PeriodicLoops({
      runtime: this.o.runtime,
      clock: this.o.clock,
      log,
      syncer: this.syncer,
      volumes: this.volumes,
      cgroups: this.cgroups,
      records: this.records,
      podLogsDir: this.o.podLogsDir,
      callTimeoutMs,
      imageGC: this.o.imageGC,
      ...(this.o.diskUsage ? { diskUsage: this.o.diskUsage } : {}),
      ...(this.o.housekeepingPeriodMs !== undefined ? { housekeepingPeriodMs: this.o.housekeepingPeriodMs } : {}),
      ...(this.o.imageGcPeriodMs !== undefined ? { imageGcPeriodMs: this.o.imageGcPeriodMs } : {}),
      ...(this.o.nodeRefreshPeriodMs !== undefined ? { nodeRefreshPeriodMs: this.o.nodeRefreshPeriodMs } : {}),
      knownUids: () => this.knownUids(),
      sourcesReady: () => this.sourcesReady,
      ...(devices ? { retainDevices: (active: ReadonlySet<string>) => devices.retainPods(active) } : {}),
      refreshNode: (s) => this.admission.refreshNode(s),
    });
  }

  /** Runs one housekeeping round now. */
  async housekeepOnce(signal?: AbortSignal): Promise<void> {
    await this.loops?.housekeepOnce(signal);
  }

  // ------------------------------------------------------------------ what the sources tell

  private gone(uid: string, fromApi: boolean): void {
    this.workers.get(uid)?.remove();
    if (fromApi && this.admission.forget(uid)) this.status.forget(uid);
  }

  private apiPod(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    this.status.observe(pod);
    if (!this.workers.has(uid) && !this.admission.admit(pod)) return;
    this.ensureWorker(pod, true);
  }

  /** The pods admission counts: with a running worker and not in a terminal phase. */
  private admittedPods(): Pod[] {
    return [...this.workers.values()]
      .filter((w) => w.phase !== 'finished')
      .filter((w) => {
        const p = this.status.get(w.uid)?.phase;
        return p !== 'Failed' && p !== 'Succeeded';
      })
      .map((w) => w.spec);
  }

  private ensureWorker(pod: Pod, fromApi: boolean): void {
    const uid = pod.metadata.uid ?? '';
    if (!uid || !this.syncer || !this.signal) return;
    const w = this.workers.get(uid);
    if (w) {
      w.update(pod);
      return;
    }
    const worker = new PodWorker(
      {
        syncer: this.syncer,
        status: this.status,
        clock: this.o.clock,
        log: this.o.log,
        resyncMs: this.o.syncFrequencyMs,
        onFinished: (u) => {
          this.workers.delete(u);
          this.probes.removePod(u);
          this.sources.kickMirrors();
        },
      },
      pod,
      fromApi,
    );
    this.workers.set(uid, worker);
    const done = worker.run(this.signal).finally(() => this.workerRuns.delete(done));
    this.workerRuns.add(done);
  }

  private knownUids(): Set<string> {
    return new Set([...this.workers.keys(), ...this.sources.knownUids()]);
  }

  // ------------------------------------------------------------------ logs

  /** See PodLogLookup.containerLog. */
  containerLog(namespace: string, podName: string, container: string, previousInstance: boolean, signal?: AbortSignal): Promise<ContainerLogLocation> {
    return this.logs.containerLog(namespace, podName, container, previousInstance, signal);
  }

  /** Whether a container still runs (log followers stop once it does not). */
  containerRunning(containerId: string, signal?: AbortSignal): Promise<boolean> {
    return this.logs.containerRunning(containerId, signal);
  }
}
