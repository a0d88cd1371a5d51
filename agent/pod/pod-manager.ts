/**
 * The agent's pod machinery in one place (upstream: the kubelet's syncLoop and what hangs off
 * it): the API source (pods bound to this node) and the static source (staticPodPath) feed one
 * worker per pod; the PLEG and probe results wake workers; the status manager writes pod status;
 * mirror pods are kept in step with static pods; housekeeping removes what the runtime holds for
 * pods that are gone and collects dead containers; image GC frees disk. Built by main.ts from
 * the agent configuration; `run(signal)` starts everything once the runtime answers.
 */
import path from 'node:path';
import type { ApiClient } from '../client/api-client';
import type { RuntimeService } from '../cri/runtime-service';
import type { Clock } from '../node/clock';
import type { Log } from '../platform/logger';
import { SeccompResolver } from '../seccomp/resolve';
import { nodesResource } from '../client/resources';
import { parseQuantity } from '../config/quantity';
import { admitPod, type AdmissionNode } from './admission';
import { ApiPodSource } from './api-pod-source';
import { ApiConfigObjects, type ConfigObjectGetter } from './config-objects';
import { Housekeeping } from './housekeeping';
import { ImageGc, type DiskUsage } from './image-gc';
import { ImageManager } from './image-manager';
import { MirrorPods } from './mirror-pods';
import { Pleg } from './pleg';
import { PodCgroups } from './pod-cgroups';
import type { PodSourceHandler, SourceName } from './pod-source';
import { podDesc, PodSyncer, type DeviceAllocator } from './pod-sync';
import { podKey, type Pod } from './pod-types';
import { PodWorker } from './pod-worker';
import { ProbeManager } from './probe-manager';
import { DefaultProber, type Prober } from './prober';
import { PullRecords } from './pull-records';
import { latest, previous } from './runtime-pod';
import { isMirrorPod, isStaticPod, StaticPodSource, CONFIG_HASH, CONFIG_MIRROR } from './static-pod-source';
import { ApiPodDeleter, StatusManager, type ApiPodRef, type PodDeleter } from './status-manager';
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
  imageGC: { highThresholdPercent: number; lowThresholdPercent: number; minAgeMs: number };
  /** Seams for tests; defaults are the real ones. */
  prober?: Prober;
  objects?: ConfigObjectGetter;
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
}

function runningRank(p: Pod): number {
  return p.status?.phase === 'Running' ? 0 : 1;
}

/** Where a container's log file is. */
export interface ContainerLogLocation {
  path: string;
  containerId: string;
  running: boolean;
}

/** A container's log could not be located; `code` is the HTTP status the log handler answers. */
export class LogLocateError extends Error {
  override readonly name = 'LogLocateError';
  constructor(
    readonly code: 400 | 404,
    message: string,
  ) {
    super(message);
  }
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

export class PodManager implements PodSourceHandler {
  private readonly apiPods = new Map<string, Pod>();
  private readonly mirrors = new Map<string, Pod>();
  private readonly staticPods = new Map<string, Pod>();
  private readonly workers = new Map<string, PodWorker>();
  private readonly workerRuns = new Set<Promise<void>>();
  private readonly apiSource: ApiPodSource;
  private readonly staticSource: StaticPodSource | undefined;
  private readonly status: StatusManager;
  private readonly probes: ProbeManager;
  private readonly volumes: VolumeManager;
  private readonly cgroups: PodCgroups;
  private readonly records: PullRecords;
  private readonly mirrorPods: MirrorPods;
  private readonly pleg: Pleg;
  private runtimeName = 'unknown';
  private syncer: PodSyncer | undefined;
  private housekeeping: Housekeeping | undefined;
  private imageGc: ImageGc | undefined;
  private signal: AbortSignal | undefined;
  private mirrorKick: (() => void) | undefined;
  /** API pods node admission refused (they never get a worker). */
  private readonly rejected = new Set<string>();
  private node: AdmissionNode | undefined;
  private readonly pending: { source: SourceName; op: 'snapshot' | 'upsert' | 'remove'; pods: Pod[] }[] = [];

  /** o.hostIPs, remembered for HOST_IPS_TTL_MS (it reads every interface; a sync asks several times). */
  private readonly hostIPs: () => string[];

  constructor(private readonly o: PodManagerOptions) {
    const log = o.log;
    this.hostIPs = cachedFor(o.hostIPs, HOST_IPS_TTL_MS, () => o.clock.now());
    this.apiSource = new ApiPodSource({ client: o.client, nodeName: o.nodeName, clock: o.clock, log, handler: this });
    if (o.staticPodPath) {
      this.staticSource = new StaticPodSource({ dir: o.staticPodPath, nodeName: o.nodeName, periodMs: o.fileCheckFrequencyMs, clock: o.clock, log, handler: this });
    }
    this.status = new StatusManager({
      client: o.client,
      deleter: o.deleter ?? new ApiPodDeleter(o.client),
      clock: o.clock,
      log,
      apiPod: (p) => this.apiPodRef(p),
    });
    this.probes = new ProbeManager({ prober: o.prober ?? new DefaultProber(o.runtime), clock: o.clock, log, onChange: (uid) => this.workers.get(uid)?.kick() });
    const objects = o.objects ?? new ApiConfigObjects(o.client);
    this.volumes = new VolumeManager({
      podsDir: path.join(o.rootDir, 'pods'),
      objects,
      now: () => o.clock.now(),
      tokens: new TokenManager({ requester: new ApiTokenRequester(o.client), now: () => o.clock.now() }),
      claims: new ApiClaims(o.client),
      nodeAllocatable: () => ({ cpuMilli: o.nodeCpuMilli, memory: o.nodeMemoryBytes }),
    });
    this.cgroups = new PodCgroups({ driver: o.cgroupDriver, root: o.cgroupRoot, clean: o.cleanCgroups ?? true, ...(o.cgroupFsRoot ? { fsRoot: o.cgroupFsRoot } : {}) });
    this.records = new PullRecords(path.join(o.rootDir, 'image_manager'), () => o.clock.now());
    this.mirrorPods = new MirrorPods({ client: o.client, nodeName: o.nodeName, nodeUid: o.nodeUid, log });
    this.pleg = new Pleg({ runtime: o.runtime, clock: o.clock, log, periodMs: o.relistPeriodMs ?? 1000, timeoutMs: o.runtimeRequestTimeoutMs, onChange: (uid) => this.workers.get(uid)?.kick() });
    this.objects = objects;
  }

  private readonly objects: ConfigObjectGetter;

  /** True once every source delivered its first full set. */
  get sourcesReady(): boolean {
    return this.apiSource.synced && (this.staticSource?.synced ?? true);
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
    const log = this.o.log;
    for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, 30_000)) {
      try {
        const v = await this.o.runtime.connect({ signal });
        this.runtimeName = v.runtimeName;
        log.info({ runtime: v.runtimeName, version: v.runtimeVersion, apiVersion: v.runtimeApiVersion }, 'connected to the container runtime');
        break;
      } catch (e) {
        if (signal.aborted) return;
        log.warn({ error: (e as Error).message, retryInMs: delay }, 'container runtime not available yet');
        await this.o.clock.sleep(delay, signal);
      }
    }
    if (signal.aborted) return;
    const callTimeoutMs = this.o.runtimeRequestTimeoutMs;
    const images = new ImageManager({
      runtime: this.o.runtime,
      clock: this.o.clock,
      records: this.records,
      log,
      serialize: this.o.serializeImagePulls,
      callTimeoutMs,
      pullTimeoutMs: this.o.pullTimeoutMs ?? 10 * 60_000,
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
      cgroups: this.cgroups,
      node: { name: this.o.nodeName, hostIPs: this.hostIPs, cpuMilli: this.o.nodeCpuMilli, memoryBytes: this.o.nodeMemoryBytes },
      podLogsDir: this.o.podLogsDir,
      clusterDNS: this.o.clusterDNS,
      clusterDomain: this.o.clusterDomain,
      callTimeoutMs,
      ...(this.o.devices ? { devices: this.o.devices } : {}),
    });
    this.housekeeping = new Housekeeping({
      runtime: this.o.runtime,
      syncer: this.syncer,
      volumes: this.volumes,
      cgroups: this.cgroups,
      podLogsDir: this.o.podLogsDir,
      log,
      knownUids: () => this.knownUids(),
      sourcesReady: () => this.sourcesReady,
      callTimeoutMs,
    });
    this.imageGc = new ImageGc({
      runtime: this.o.runtime,
      clock: this.o.clock,
      log,
      records: this.records,
      highThresholdPercent: this.o.imageGC.highThresholdPercent,
      lowThresholdPercent: this.o.imageGC.lowThresholdPercent,
      minAgeMs: this.o.imageGC.minAgeMs,
      callTimeoutMs,
      ...(this.o.diskUsage ? { diskUsage: this.o.diskUsage } : {}),
    });
    // Admission needs the node's labels, taints and allocatable; the pods wait for one attempt.
    await this.refreshNode(signal);
    // Changes that arrived before the runtime was up.
    for (const p of this.pending.splice(0)) this.apply(p.source, p.op, p.pods);
    const loops = [
      this.apiSource.run(signal),
      this.staticSource?.run(signal) ?? Promise.resolve(),
      this.pleg.run(signal),
      this.status.run(signal),
      this.every(this.o.housekeepingPeriodMs ?? 10_000, signal, async () => {
        await this.housekeeping?.runOnce(signal);
        if (this.o.devices && this.sourcesReady) await this.o.devices.retainPods(this.knownUids());
      }),
      this.every(this.o.imageGcPeriodMs ?? 5 * 60_000, signal, async () => {
        await this.imageGc?.runOnce(signal);
      }),
      this.mirrorLoop(signal),
      this.every(this.o.nodeRefreshPeriodMs ?? 10_000, signal, () => this.refreshNode(signal)),
    ];
    await Promise.allSettled(loops);
    // Workers see the same abort; wait for them to end their current call.
    await Promise.allSettled([...this.workerRuns]);
  }

  /** Runs one housekeeping round now. */
  async housekeepOnce(signal?: AbortSignal): Promise<void> {
    await this.housekeeping?.runOnce(signal);
  }

  // ------------------------------------------------------------------ PodSourceHandler

  snapshot(source: SourceName, pods: Pod[]): void {
    this.enqueue(source, 'snapshot', pods);
  }

  upsert(source: SourceName, pod: Pod): void {
    this.enqueue(source, 'upsert', [pod]);
  }

  remove(source: SourceName, pod: Pod): void {
    this.enqueue(source, 'remove', [pod]);
  }

  private enqueue(source: SourceName, op: 'snapshot' | 'upsert' | 'remove', pods: Pod[]): void {
    if (!this.syncer) {
      this.pending.push({ source, op, pods });
      return;
    }
    this.apply(source, op, pods);
  }

  private apply(source: SourceName, op: 'snapshot' | 'upsert' | 'remove', pods: Pod[]): void {
    if (source === 'file') {
      // The static source only ever sends full sets.
      const next = new Map(pods.map((p) => [p.metadata.uid ?? '', p]));
      for (const [uid] of this.staticPods) if (!next.has(uid)) this.workers.get(uid)?.remove();
      this.staticPods.clear();
      for (const [uid, p] of next) {
        this.staticPods.set(uid, p);
        this.ensureWorker(p, false);
      }
      this.mirrorKick?.();
      return;
    }
    if (op === 'snapshot') {
      const uids = new Set(pods.filter((p) => !isMirrorPod(p)).map((p) => p.metadata.uid ?? ''));
      for (const uid of [...this.apiPods.keys()]) {
        if (!uids.has(uid)) {
          this.apiPods.delete(uid);
          this.workers.get(uid)?.remove();
          if (this.rejected.delete(uid)) this.status.forget(uid);
        }
      }
      this.mirrors.clear();
      // Admission in upstream's order: pods that already run here first (an agent restart must
      // not reject them for pods that came later), then by creation time.
      pods = [...pods].sort((a, b) => runningRank(a) - runningRank(b) || (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    }
    for (const pod of pods) {
      if (isMirrorPod(pod)) {
        if (op === 'remove') this.mirrors.delete(podKey(pod));
        else this.mirrors.set(podKey(pod), pod);
        this.mirrorKick?.();
        continue;
      }
      const uid = pod.metadata.uid ?? '';
      if (op === 'remove') {
        this.apiPods.delete(uid);
        this.workers.get(uid)?.remove();
        if (this.rejected.delete(uid)) this.status.forget(uid);
        continue;
      }
      this.apiPods.set(uid, pod);
      this.status.observe(pod);
      if (!this.workers.has(uid) && !this.admit(pod)) continue;
      this.ensureWorker(pod, true);
    }
  }

  /**
   * Node-side admission (./admission) of an API pod about to get a worker. A rejected pod gets no
   * worker and its status becomes Failed with the reason; it is not looked at again. Pods already
   * in a terminal phase pass (their worker only winds them down).
   */
  private admit(pod: Pod): boolean {
    const uid = pod.metadata.uid ?? '';
    if (this.rejected.has(uid)) return false;
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded' || pod.metadata.deletionTimestamp) return true;
    const admitted = [...this.workers.values()]
      .filter((w) => w.phase !== 'finished')
      .filter((w) => {
        const p = this.status.get(w.uid)?.phase;
        return p !== 'Failed' && p !== 'Succeeded';
      })
      .map((w) => w.spec);
    const r = admitPod(pod, admitted, this.admissionNode());
    if (r.admit) return true;
    this.rejected.add(uid);
    this.o.log.warn({ pod: podDesc(pod), reason: r.reason, message: r.message }, 'pod rejected by node admission');
    const now = new Date(this.o.clock.now()).toISOString();
    this.status.set(pod, { ...(pod.status ?? {}), phase: 'Failed', reason: r.reason, message: r.message, startTime: pod.status?.startTime ?? now });
    return false;
  }

  /** The node as admission sees it: the last Node object read, else the configured capacity. */
  private admissionNode(): AdmissionNode {
    return (
      this.node ?? {
        name: this.o.nodeName,
        labels: {},
        taints: [],
        allocatable: { cpuMilli: this.o.nodeCpuMilli, memoryBytes: this.o.nodeMemoryBytes, pods: this.o.maxPods ?? 110 },
      }
    );
  }

  /** Reads this node's labels, taints and allocatable for admission. Never rejects. */
  private async refreshNode(signal: AbortSignal): Promise<void> {
    try {
      const n = await this.o.client.get(nodesResource, this.o.nodeName, { signal, timeoutMs: 10_000 });
      const alloc = ((n as { status?: { allocatable?: Record<string, string> } }).status?.allocatable ?? {});
      const q = (v: string | undefined, dflt: number) => {
        if (v === undefined) return dflt;
        try {
          return parseQuantity(v);
        } catch {
          return dflt;
        }
      };
      const spec = (n as { spec?: { taints?: AdmissionNode['taints'] } }).spec;
      this.node = {
        name: this.o.nodeName,
        labels: n.metadata.labels ?? {},
        taints: spec?.taints ?? [],
        allocatable: {
          cpuMilli: Math.round(q(alloc['cpu'], this.o.nodeCpuMilli / 1000) * 1000),
          memoryBytes: q(alloc['memory'], this.o.nodeMemoryBytes),
          pods: q(alloc['pods'], this.o.maxPods ?? 110),
        },
      };
    } catch (e) {
      if (!signal.aborted) this.o.log.debug({ error: (e as Error).message }, 'cannot read the node for pod admission yet');
    }
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
          this.mirrorKick?.();
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
    return new Set([...this.workers.keys(), ...this.apiPods.keys(), ...this.staticPods.keys()]);
  }

  /** Where a pod's status goes: the pod itself, or for a static pod its current mirror pod. */
  private apiPodRef(pod: Pod): ApiPodRef | undefined {
    const ref = { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
    if (!isStaticPod(pod)) return { ...ref, uid: pod.metadata.uid ?? '' };
    const m = this.mirrors.get(podKey(pod));
    const hash = pod.metadata.annotations?.[CONFIG_HASH] ?? pod.metadata.uid;
    if (!m || m.metadata.deletionTimestamp || m.metadata.annotations?.[CONFIG_MIRROR] !== hash || !m.metadata.uid) return undefined;
    return { ...ref, uid: m.metadata.uid };
  }

  private async mirrorLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // Only once the API list arrived do we know which mirrors exist.
      if (this.apiSource.synced) {
        try {
          await this.mirrorPods.reconcile([...this.staticPods.values()], [...this.mirrors.values()], signal);
        } catch (e) {
          if (signal.aborted) return;
          this.o.log.warn({ error: (e as Error).message }, 'cannot reconcile mirror pods yet');
        }
      }
      const ac = new AbortController();
      this.mirrorKick = () => ac.abort();
      await this.o.clock.sleep(this.o.mirrorPeriodMs ?? 10_000, AbortSignal.any([signal, ac.signal]));
      this.mirrorKick = undefined;
    }
  }

  private async every(ms: number, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.o.clock.sleep(ms, signal))) return;
      try {
        await fn();
      } catch (e) {
        if (signal.aborted) return;
        this.o.log.warn({ error: (e as Error).message }, 'periodic pod task failed');
      }
    }
  }

  // ------------------------------------------------------------------ logs

  /**
   * The log file of a pod's container (the previous instance with `previous`). Rejects
   * LogLocateError: 404 for an unknown pod or container, 400 when there is no previous instance
   * (upstream's message), and RuntimeError when the runtime cannot be asked.
   */
  async containerLog(namespace: string, podName: string, container: string, previousInstance: boolean, signal?: AbortSignal): Promise<ContainerLogLocation> {
    const pod = this.podByName(namespace, podName);
    if (!pod) throw new LogLocateError(404, `pod ${namespace}/${podName} is not running on this node`);
    const names = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => c.name);
    if (!names.includes(container)) throw new LogLocateError(404, `container ${container} is not valid for pod ${podName}`);
    if (!this.syncer) throw new LogLocateError(404, 'the container runtime is not connected yet');
    const rp = await this.syncer.fetch(pod.metadata.uid ?? '', signal);
    const kind = (pod.spec.initContainers ?? []).some((c) => c.name === container) ? 'init' : 'container';
    const c = previousInstance ? previous(rp, container, kind) : latest(rp, container, kind);
    if (!c) {
      if (previousInstance) throw new LogLocateError(400, `previous terminated container "${container}" in pod "${podName}" not found`);
      throw new LogLocateError(400, `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`);
    }
    if (!c.logPath) throw new LogLocateError(404, `container "${container}" in pod "${podName}" has no log file`);
    return { path: c.logPath, containerId: c.id, running: c.state === 'CONTAINER_RUNNING' };
  }

  /** Whether a container still runs (log followers stop once it does not). */
  async containerRunning(containerId: string, signal?: AbortSignal): Promise<boolean> {
    try {
      const st = await this.o.runtime.containerStatus(containerId, false, { timeoutMs: this.o.runtimeRequestTimeoutMs, ...(signal ? { signal } : {}) });
      return st.status.state === 'CONTAINER_RUNNING';
    } catch {
      return false;
    }
  }
}
