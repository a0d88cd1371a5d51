/**
 * One pod's convergence steps, as upstream's kubelet SyncPod / SyncTerminatingPod /
 * SyncTerminatedPod over the CRI: read the runtime state, compute the actions (./pod-actions),
 * kill what must die, create the sandbox (volumes first), start the next init container or the
 * containers (crash-loop back-off, image, config, seccomp, create, start), then compute the pod
 * status. Every CRI call carries a deadline; a container that cannot start records its upstream
 * reason (ErrImagePull, CrashLoopBackOff, CreateContainerError ...) for the status and the sync
 * goes on with the others. Termination stops containers with the grace period and the sandbox;
 * cleanup removes them, the pod's volumes and its cgroup.
 */
import { performance } from 'node:perf_hooks';
import { isNotFound, RuntimeError, type RuntimeService, type PodSandboxConfig } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { SeccompProfileError, type SeccompResolver } from '../seccomp/resolve';
import type { ConfigObjectGetter } from './config-objects';
import { DEVICE_IDS_LABEL, type DeviceRunOptions } from '../devices/container-allocation';
import { DeviceAdmissionError } from '../devices/device-manager';
import { applyDeviceAllocation, buildContainerConfig } from './container-config';
import { containerEnv } from './env';
import { FlowBackoff, goDuration } from './flow-backoff';
import type { ImageManager } from './image-manager';
import { computePodActions, latestByName } from './pod-actions';
import type { PodCgroups } from './pod-cgroups';
import { generatePodStatus } from './pod-status';
import type { Container, Pod, PodStatus } from '../api/core-v1';
import type { ProbeManager } from './probe-manager';
import { fetchRuntimePod, type RuntimePod } from './runtime-pod';
import { buildSandboxConfig } from './sandbox-config';
import { ContainerSyncError, Reasons } from './sync-errors';
import { VolumeError, type VolumeManager } from './volumes';

export interface NodeFacts {
  name: string;
  /** The node's IPs (InternalIP addresses), first one primary. */
  hostIPs: () => string[];
  cpuMilli: number;
  memoryBytes: number;
}

/**
 * Device plugins' devices for pods (DeviceManager). admitPod gives every container of the pod its
 * devices or rejects DeviceAdmissionError (the pod fails with UnexpectedAdmissionError);
 * runOptions says what CreateContainer adds for a container's devices (rejects Error when a
 * plugin's PreStartContainer fails); releasePod frees a pod's devices. All idempotent.
 */
export interface DeviceAllocator {
  admitPod(pod: Pod, signal?: AbortSignal): Promise<void>;
  runOptions(podUid: string, containerName: string): Promise<DeviceRunOptions | undefined>;
  releasePod(podUid: string): Promise<void>;
}

export interface PodSyncDeps {
  runtime: RuntimeService;
  /** Prefix of containerIDs in status ("containerd"). */
  runtimeName: string;
  clock: Clock;
  log: Log;
  images: ImageManager;
  volumes: VolumeManager;
  seccomp: SeccompResolver;
  probes: ProbeManager;
  objects: ConfigObjectGetter;
  cgroups: PodCgroups;
  node: NodeFacts;
  podLogsDir: string;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** Deadline of ordinary CRI calls (runtimeRequestTimeout). */
  callTimeoutMs: number;
  /** Device plugins; without it extended resources are not handed out. */
  devices?: DeviceAllocator;
}

/** What a worker remembers about its pod between syncs. */
export interface PodSyncState {
  startTime: number;
  /** Waiting reasons of containers that could not be started, by name. */
  waiting: Map<string, { reason: string; message: string }>;
  /** Set once the agent failed the pod itself (activeDeadlineSeconds). */
  failure?: { reason: string; message: string };
  /** The status last computed (and the API's before that). */
  lastStatus?: PodStatus;
  /** Set once the pod's devices were allocated (or it needs none). */
  admitted?: boolean;
}

export interface SyncResult {
  status: PodStatus;
  /** Sync again after this long even without an event (back-offs ending, retries). */
  requeueMs?: number;
}

/** Upstream minimumGracePeriodInSeconds for killing a container. */
const MIN_GRACE_SECONDS = 2;
/** Retry delay after a failure that has no back-off of its own (sandbox, volumes). */
export const RETRY_MS = 10_000;

export function podDesc(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;
}

/** The grace period of a kill: the pod's deletion grace period, else its spec's, else 30 s. */
export function gracePeriodSeconds(pod: Pod, override?: number): number {
  const g = override ?? pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
  return Math.max(MIN_GRACE_SECONDS, g);
}

export class PodSyncer {
  readonly crashBackoff: FlowBackoff;

  constructor(private readonly d: PodSyncDeps) {
    this.crashBackoff = new FlowBackoff(d.clock);
  }

  private call(signal?: AbortSignal, extraMs = 0) {
    return { timeoutMs: this.d.callTimeoutMs + extraMs, ...(signal ? { signal } : {}) };
  }

  /** The pod's runtime state. Rejects RuntimeError when the runtime cannot answer. */
  fetch(uid: string, signal?: AbortSignal): Promise<RuntimePod> {
    return fetchRuntimePod(this.d.runtime, uid, {
      timeoutMs: this.d.callTimeoutMs,
      ...(signal ? { signal } : {}),
      terminationLog: (u, name, attempt) => `${this.d.volumes.podDir(u)}/containers/${name}/termination-log-${attempt}`,
    });
  }

  private async sandboxConfig(pod: Pod, attempt: number): Promise<PodSandboxConfig> {
    return buildSandboxConfig({
      pod,
      attempt,
      podLogsDir: this.d.podLogsDir,
      cgroupParent: this.d.cgroups.parentFor(pod.metadata.uid ?? ''),
      seccomp: await this.d.seccomp.resolveSandbox(pod.spec.securityContext?.seccompProfile),
      clusterDNS: this.d.clusterDNS,
      clusterDomain: this.d.clusterDomain,
    });
  }

  /** Stops one container with its grace period. Idempotent; NotFound counts as stopped. */
  async killContainer(pod: Pod, id: string, name: string, message: string, graceOverride?: number, signal?: AbortSignal): Promise<void> {
    const grace = gracePeriodSeconds(pod, graceOverride);
    this.d.log.info({ pod: podDesc(pod), container: name, containerId: id, graceSeconds: grace }, `killing container: ${message}`);
    try {
      await this.d.runtime.stopContainer(id, grace, this.call(signal, grace * 1000));
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Stops every running container (in parallel) and every ready sandbox of the pod. */
  async killPod(pod: Pod, rp: RuntimePod, graceOverride?: number, signal?: AbortSignal): Promise<void> {
    const running = rp.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    const results = await Promise.allSettled(running.map((c) => this.killContainer(pod, c.id, c.name, 'stopping pod', graceOverride, signal)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    for (const s of rp.sandboxes) {
      if (s.state !== 'SANDBOX_READY') continue;
      try {
        await this.d.runtime.stopPodSandbox(s.id, this.call(signal));
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /** One convergence step for a live pod. Rejects RuntimeError when the runtime cannot be read (the worker retries). */
  async sync(pod: Pod, st: PodSyncState, signal?: AbortSignal): Promise<SyncResult> {
    const uid = pod.metadata.uid ?? '';
    const t0 = performance.now();
    const marks: [string, number][] = [];
    const mark = (step: string) => marks.push([step, Math.round((performance.now() - t0) * 10) / 10]);
    let rp = await this.fetch(uid, signal);
    mark('fetch');
    let requeue: number | undefined;
    const want = (ms: number) => {
      requeue = requeue === undefined ? ms : Math.min(requeue, ms);
    };

    const ads = pod.spec.activeDeadlineSeconds;
    if (!st.failure && ads !== undefined && this.d.clock.now() - st.startTime >= ads * 1000) {
      st.failure = { reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` };
      this.d.log.info({ pod: podDesc(pod), activeDeadlineSeconds: ads }, 'pod exceeded its active deadline');
    } else if (!st.failure && ads !== undefined) {
      want(st.startTime + ads * 1000 - this.d.clock.now());
    }
    const terminalPhase = st.lastStatus?.phase === 'Failed' || st.lastStatus?.phase === 'Succeeded';
    if (!st.failure && !terminalPhase && !st.admitted && this.d.devices) {
      // Upstream allocates devices in pod admission; a pod that cannot get them fails as a whole.
      try {
        await this.d.devices.admitPod(pod, signal);
        st.admitted = true;
      } catch (e) {
        if (!(e instanceof DeviceAdmissionError)) throw e;
        st.failure = { reason: e.reason, message: e.message };
        this.d.log.warn({ pod: podDesc(pod), reason: e.reason, message: e.message }, 'pod cannot get its devices');
      }
    }
    if (st.failure || terminalPhase) {
      // A pod in a terminal phase only winds down (upstream: a terminal pod's worker stops syncing it).
      if (rp.containers.some((c) => c.state === 'CONTAINER_RUNNING') || rp.sandboxes.some((s) => s.state === 'SANDBOX_READY')) {
        await this.killPod(pod, rp, undefined, signal);
        rp = await this.fetch(uid, signal);
      }
      // A terminal pod's devices go back to the pool (upstream: only active pods hold devices).
      await this.d.devices?.releasePod(uid);
      this.d.probes.removePod(uid);
      return { status: this.status(pod, st, rp, true) };
    }

    const actions = computePodActions(pod, rp, this.d.probes);
    let changed = false;
    if (actions.killPod) {
      const live = rp.containers.some((c) => c.state === 'CONTAINER_RUNNING') || rp.sandboxes.some((s) => s.state === 'SANDBOX_READY');
      if (live) {
        await this.killPod(pod, rp, undefined, signal);
        changed = true;
      }
    } else {
      for (const k of actions.containersToKill) {
        await this.killContainer(pod, k.id, k.name, k.message, k.graceSeconds, signal);
        changed = true;
      }
    }

    let sandboxId = actions.createSandbox ? undefined : actions.sandboxId;
    let podIPs = actions.createSandbox ? [] : (rp.sandboxes[0]?.ips ?? []);
    const attempt = actions.createSandbox ? actions.sandboxAttempt : (rp.sandboxes[0]?.attempt ?? 0);
    const toStart: { c: Container; kind: 'init' | 'container' }[] = actions.nextInitContainer
      ? [{ c: actions.nextInitContainer, kind: 'init' }]
      : actions.containersToStart.map((c) => ({ c, kind: 'container' as const }));
    const ephemeral = actions.ephemeralToStart;
    const setWaiting = (reason: string, message: string) => {
      for (const { c } of toStart) st.waiting.set(c.name, { reason, message });
    };

    let volumes: Map<string, string> | undefined;
    if (!actions.createSandbox && toStart.length === 0 && ephemeral.length === 0 && actions.sandboxId && (pod.spec.volumes ?? []).length > 0) {
      // Nothing to start: refresh configMap and secret contents for the running containers; a
      // source that went away leaves the last contents in place (upstream does the same).
      await this.d.volumes.setUp(pod, signal).catch((e: Error) => this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'cannot refresh volumes'));
    }
    if (actions.createSandbox || toStart.length > 0 || ephemeral.length > 0) {
      try {
        volumes = await this.d.volumes.setUp(pod, signal);
        mark('volumes');
      } catch (e) {
        if (!(e instanceof VolumeError)) throw e;
        this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'volumes not ready');
        const reason = (pod.spec.initContainers ?? []).length > 0 ? Reasons.PodInitializing : Reasons.ContainerCreating;
        for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
          if (!latestByName(rp, c.name)) st.waiting.set(c.name, { reason, message: e.message });
        }
        want(RETRY_MS);
        toStart.length = 0;
        ephemeral.length = 0;
      }
    }

    let sandboxConfig: PodSandboxConfig | undefined;
    if (actions.createSandbox && volumes) {
      sandboxConfig = await this.sandboxConfig(pod, attempt);
      try {
        this.d.log.info({ pod: podDesc(pod), attempt }, 'creating pod sandbox');
        mark('sandboxConfig');
        sandboxId = await this.d.runtime.runPodSandbox(sandboxConfig, pod.spec.runtimeClassName ?? '', this.call(signal));
        mark('runPodSandbox');
        const sst = await this.d.runtime.podSandboxStatus(sandboxId, false, this.call(signal));
        podIPs = [sst.status.ip, ...sst.status.additionalIps].filter((x) => x !== '');
        mark('podSandboxStatus');
        changed = true;
      } catch (e) {
        if (!(e instanceof RuntimeError)) throw e;
        this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'failed to create pod sandbox');
        const reason = (pod.spec.initContainers ?? []).length > 0 ? Reasons.PodInitializing : Reasons.ContainerCreating;
        setWaiting(reason, `Failed to create pod sandbox: ${e.message}`);
        sandboxId = undefined;
        want(RETRY_MS);
      }
    }

    if (sandboxId && volumes && toStart.length > 0) {
      sandboxConfig ??= await this.sandboxConfig(pod, attempt);
      if (pod.spec.hostNetwork) podIPs = this.d.node.hostIPs();
      for (const { c, kind } of toStart) {
        try {
          await this.startContainer(pod, c, kind, sandboxId, sandboxConfig, podIPs, volumes, rp, signal, mark);
          st.waiting.delete(c.name);
          changed = true;
        } catch (e) {
          if (!(e instanceof ContainerSyncError)) throw e;
          st.waiting.set(c.name, { reason: e.reason, message: e.message });
          this.d.log.info({ pod: podDesc(pod), container: c.name, reason: e.reason, message: e.message }, 'container not started');
          want(e.retryAfterMs ?? RETRY_MS);
        }
      }
    }

    if (sandboxId && volumes && ephemeral.length > 0) {
      sandboxConfig ??= await this.sandboxConfig(pod, attempt);
      const ips = pod.spec.hostNetwork ? this.d.node.hostIPs() : podIPs;
      for (const c of ephemeral) {
        try {
          await this.startContainer(pod, c, 'ephemeral', sandboxId, sandboxConfig, ips, volumes, rp, signal, mark, c.targetContainerName);
          st.waiting.delete(c.name);
          changed = true;
        } catch (e) {
          if (!(e instanceof ContainerSyncError)) throw e;
          st.waiting.set(c.name, { reason: e.reason, message: e.message });
          this.d.log.info({ pod: podDesc(pod), container: c.name, reason: e.reason, message: e.message }, 'ephemeral container not started');
          want(e.retryAfterMs ?? RETRY_MS);
        }
      }
    }

    if (changed) {
      rp = await this.fetch(uid, signal);
      mark('refetch');
    }
    // Probe workers follow the running containers.
    const running = [];
    for (const rc of rp.containers) {
      if (rc.state !== 'CONTAINER_RUNNING' || rc.kind !== 'container') continue;
      const spec = pod.spec.containers.find((c) => c.name === rc.name);
      if (spec && latestByName(rp, rc.name)?.id === rc.id) running.push({ id: rc.id, container: spec, startedAt: rc.startedAt || rc.createdAt });
    }
    const ips = pod.spec.hostNetwork ? this.d.node.hostIPs() : (rp.sandboxes[0]?.ips ?? []);
    if (signal) this.d.probes.sync(pod, running, ips, signal);
    const result: SyncResult = { status: this.status(pod, st, rp, false) };
    if (changed) {
      mark('status');
      this.d.log.debug({ pod: podDesc(pod), steps: Object.fromEntries(marks) }, 'pod sync steps (ms since the sync began)');
    }
    if (requeue !== undefined) result.requeueMs = requeue;
    return result;
  }

  private backoffKey(pod: Pod, c: Container): string {
    return `${pod.metadata.uid ?? ''}/${c.name}`;
  }

  private async startContainer(
    pod: Pod,
    c: Container,
    kind: 'init' | 'container' | 'ephemeral',
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    podIPs: string[],
    volumes: Map<string, string>,
    rp: RuntimePod,
    signal?: AbortSignal,
    mark: (step: string) => void = () => undefined,
    /** An ephemeral container's targetContainerName: it joins that container's PID namespace. */
    targetName?: string,
  ): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    // Attempts continue across sandboxes: runtimes reserve <name>_<pod>_<ns>_<uid>_<attempt>.
    const last = latestByName(rp, c.name);
    if (last && last.state === 'CONTAINER_EXITED') {
      const key = this.backoffKey(pod, c);
      if (this.crashBackoff.isInBackOffSince(key, last.finishedAt)) {
        throw new ContainerSyncError(
          Reasons.CrashLoopBackOff,
          `back-off ${goDuration(this.crashBackoff.get(key))} restarting failed container=${c.name} pod=${podDesc(pod)}`,
          Math.max(100, this.crashBackoff.remaining(key, last.finishedAt)),
        );
      }
      this.crashBackoff.next(key, last.finishedAt);
    }
    const imageRef = await this.d.images.ensureImage(pod, c, sandboxConfig, signal);
    mark(`${c.name}:image`);
    const attempt = last ? last.attempt + 1 : 0;
    const env = await containerEnv(pod, c, {
      objects: this.d.objects,
      podIPs,
      hostIPs: this.d.node.hostIPs(),
      nodeCpuMilli: this.d.node.cpuMilli,
      nodeMemoryBytes: this.d.node.memoryBytes,
      ...(signal ? { signal } : {}),
    });
    let seccomp;
    try {
      seccomp = await this.d.seccomp.resolve({
        podProfile: pod.spec.securityContext?.seccompProfile,
        containerProfile: c.securityContext?.seccompProfile,
        privileged: c.securityContext?.privileged === true,
        kind,
      });
    } catch (e) {
      if (e instanceof SeccompProfileError) throw new ContainerSyncError(Reasons.CreateContainerError, e.message);
      throw e;
    }
    mark(`${c.name}:env+seccomp`);
    const terminationLogPath = await this.d.volumes.terminationLog(uid, c.name, attempt);
    const config = buildContainerConfig({ pod, container: c, kind, attempt, env, volumes, seccomp, terminationLogPath, memoryCapacity: this.d.node.memoryBytes });
    config.image = { image: imageRef, userSpecifiedImage: c.image ?? '' };
    if (this.d.devices) {
      let devs: DeviceRunOptions | undefined;
      try {
        devs = await this.d.devices.runOptions(uid, c.name);
      } catch (e) {
        throw new ContainerSyncError(Reasons.CreateContainerConfigError, (e as Error).message);
      }
      if (devs) {
        applyDeviceAllocation(config, devs.allocation);
        // Lets the device manager rebuild its allocations from the runtime if its checkpoint is lost.
        config.labels = { ...(config.labels ?? {}), [DEVICE_IDS_LABEL]: JSON.stringify(devs.deviceIds) };
      }
    }
    if (targetName) {
      // Upstream: an ephemeral container with a target shares the target's process namespace (pid TARGET).
      const target = rp.containers.find((r) => r.name === targetName && r.kind !== 'ephemeral' && r.state === 'CONTAINER_RUNNING');
      if (!target) throw new ContainerSyncError(Reasons.CreateContainerError, `target container "${targetName}" is not running`);
      const linux = (config.linux ??= {});
      const sc = (linux.securityContext ??= {});
      sc.namespaceOptions = { ...(sc.namespaceOptions ?? {}), pid: 'TARGET', targetId: target.id };
    }
    let id: string;
    try {
      mark(`${c.name}:config`);
      id = await this.d.runtime.createContainer(sandboxId, config, sandboxConfig, this.call(signal));
      mark(`${c.name}:createContainer`);
    } catch (e) {
      if (e instanceof RuntimeError) throw new ContainerSyncError(Reasons.CreateContainerError, e.message);
      throw e;
    }
    try {
      await this.d.runtime.startContainer(id, this.call(signal));
      mark(`${c.name}:startContainer`);
    } catch (e) {
      if (e instanceof RuntimeError) throw new ContainerSyncError(Reasons.RunContainerError, e.message);
      throw e;
    }
    this.d.log.info({ pod: podDesc(pod), container: c.name, containerId: id, attempt }, 'started container');
  }

  /** Computes the API status for the pod's current runtime state. */
  status(pod: Pod, st: PodSyncState, rp: RuntimePod, terminal: boolean): PodStatus {
    const status = generatePodStatus({
      pod,
      runtime: rp,
      waiting: st.waiting,
      ready: (id, c) => this.d.probes.ready(id, c),
      started: (id, c) => this.d.probes.started(id, c),
      hostIPs: this.d.node.hostIPs(),
      startTime: st.startTime,
      runtimeName: this.d.runtimeName,
      terminal,
      ...(st.lastStatus ? { previous: st.lastStatus } : {}),
      ...(st.failure ? { failure: st.failure } : {}),
      now: this.d.clock.now(),
    });
    st.lastStatus = status;
    return status;
  }

  /** Stops the pod (containers with the grace period, then sandboxes) and resolves its final status. */
  async terminate(pod: Pod, st: PodSyncState, graceOverride?: number, signal?: AbortSignal): Promise<PodStatus> {
    const uid = pod.metadata.uid ?? '';
    this.d.probes.removePod(uid);
    const rp = await this.fetch(uid, signal);
    await this.killPod(pod, rp, graceOverride, signal);
    const after = await this.fetch(uid, signal);
    return this.status(pod, st, after, true);
  }

  /** Removes the pod's containers and sandboxes, then its volumes and cgroup. Idempotent. */
  async cleanup(uid: string, signal?: AbortSignal): Promise<void> {
    const rp = await this.fetch(uid, signal);
    for (const c of rp.containers) await this.d.runtime.removeContainer(c.id, this.call(signal));
    for (const s of rp.sandboxes) {
      try {
        await this.d.runtime.stopPodSandbox(s.id, this.call(signal));
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      await this.d.runtime.removePodSandbox(s.id, this.call(signal));
    }
    await this.d.volumes.tearDown(uid);
    const left = await this.d.cgroups.remove(uid);
    if (left.length > 0) this.d.log.warn({ pod: uid, cgroups: left }, 'pod cgroups not removed yet');
    await this.d.devices?.releasePod(uid);
    this.crashBackoff.forgetPrefix(`${uid}/`);
    this.d.images.forgetPod(uid);
    this.d.probes.removePod(uid);
  }
}
