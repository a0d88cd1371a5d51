/**
 * One pod's convergence steps, as upstream's kubelet SyncPod / SyncTerminatingPod /
 * SyncTerminatedPod over the CRI: read the runtime state, compute the actions (./pod-actions),
 * kill what must die, create the sandbox (volumes first), start the next init container or the
 * containers (./container-start: crash-loop back-off, image, config, seccomp, create, start), then
 * compute the pod status. Every CRI call carries a deadline; a container that cannot start records its upstream
 * reason (ErrImagePull, CrashLoopBackOff, CreateContainerError ...) for the status and the sync
 * goes on with the others. Termination stops containers with the grace period and the sandbox;
 * cleanup removes them, the pod's volumes and its cgroup.
 */
import { performance } from 'node:perf_hooks';
import { RuntimeClassError } from './runtime-classes';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { isNotFound, RuntimeError, type PodSandboxConfig } from '../cri';
import { DeviceAdmissionError } from '../devices/device-manager';
import { ContainerStarter } from './container-start';
import { computePodActions, latestByName, type EphemeralContainer, type PodActions } from './pod-actions';
import { containerRef, podRef } from './pod-events';
import type { PodDnsWarning } from '../dns/pod-dns';
import { generatePodStatus } from './pod-status';
import { gracePeriodSeconds, podDesc, RETRY_MS, type PodSyncDeps, type PodSyncState, type SyncResult } from './pod-sync-types';
import type { Container, Pod, PodStatus } from '../api/core-v1';
import { fetchRuntimePod, type RuntimePod } from './runtime-pod';
import { buildSandboxConfig } from './sandbox-config';
import { ContainerSyncError, Reasons } from './sync-errors';
import { VolumeError } from './volumes';

export {
  gracePeriodSeconds,
  podDesc,
  RETRY_MS,
  type DeviceAllocator,
  type NodeFacts,
  type PodSyncDeps,
  type PodSyncState,
  type SyncResult,
} from './pod-sync-types';

/** One sync's bookkeeping: the pod, each step's time, whether the runtime changed, when to sync again. */
class SyncPass {
  readonly uid: string;
  /** Each step's time in ms since the sync began (logged at debug level when the sync did work). */
  readonly marks: [string, number][] = [];
  /** Set when a step changed the runtime: its state is read again before the status. */
  changed = false;
  /** Sync again after this long even without an event: the soonest any step asked for. */
  requeue: number | undefined;
  private readonly t0 = performance.now();

  constructor(
    readonly pod: Pod,
    readonly st: PodSyncState,
    readonly signal: AbortSignal | undefined,
  ) {
    this.uid = pod.metadata.uid ?? '';
  }

  readonly mark = (step: string): void => {
    this.marks.push([step, Math.round((performance.now() - this.t0) * 10) / 10]);
  };

  want(ms: number): void {
    this.requeue = this.requeue === undefined ? ms : Math.min(this.requeue, ms);
  }
}

/** What a sync starts after the kills: in which sandbox (existing or to create), with which IPs, which containers. */
interface StartPlan {
  sandboxId: string | undefined;
  podIPs: string[];
  /** The sandbox's attempt: the new one's, else the existing one's. */
  attempt: number;
  sandboxConfig?: PodSandboxConfig;
  /** The next init container, else the containers to start. */
  toStart: { c: Container; kind: 'init' | 'container' }[];
  ephemeral: EphemeralContainer[];
}

function planStarts(actions: PodActions, rp: RuntimePod): StartPlan {
  return {
    sandboxId: actions.createSandbox ? undefined : actions.sandboxId,
    podIPs: actions.createSandbox ? [] : (rp.sandboxes[0]?.ips ?? []),
    attempt: actions.createSandbox ? actions.sandboxAttempt : (rp.sandboxes[0]?.attempt ?? 0),
    toStart: actions.nextInitContainer
      ? [{ c: actions.nextInitContainer, kind: 'init' }]
      : actions.containersToStart.map((c) => ({ c, kind: 'container' as const })),
    ephemeral: actions.ephemeralToStart,
  };
}

export class PodSyncer {
  private readonly starter: ContainerStarter;

  constructor(private readonly d: PodSyncDeps) {
    this.starter = new ContainerStarter(d);
  }

  private call(signal?: AbortSignal, extraMs = 0) {
    return { timeoutMs: this.d.callTimeoutMs + extraMs, ...(signal ? { signal } : {}) };
  }

  private get recorder(): EventRecorder {
    return this.d.recorder ?? NOOP_RECORDER;
  }

  /** The pod's runtime state. Rejects RuntimeError when the runtime cannot answer. */
  fetch(uid: string, signal?: AbortSignal): Promise<RuntimePod> {
    return fetchRuntimePod(this.d.runtime, uid, {
      timeoutMs: this.d.callTimeoutMs,
      ...(signal ? { signal } : {}),
      terminationLog: (u, name, attempt) => `${this.d.volumes.podDir(u)}/containers/${name}/termination-log-${attempt}`,
    });
  }

  /** The pod's sandbox config; `create` (a new sandbox) also records its DNS warnings, once per sandbox. */
  private async sandboxConfig(pod: Pod, attempt: number, create = false): Promise<PodSandboxConfig> {
    const hostDns = await this.d.hostDns?.();
    return buildSandboxConfig({
      pod,
      attempt,
      podLogsDir: this.d.podLogsDir,
      cgroupParent: this.d.cgroups.parentFor(pod.metadata.uid ?? ''),
      seccomp: await this.d.seccomp.resolveSandbox(pod.spec.securityContext?.seccompProfile),
      clusterDNS: this.d.clusterDNS,
      clusterDomain: this.d.clusterDomain,
      ...(hostDns ? { hostDns } : {}),
      ...(create ? { onDnsWarning: (w: PodDnsWarning) => this.dnsWarning(pod, w) } : {}),
    });
  }

  /** A pod DNS warning as events: on the pod, and (MissingClusterDNS) on the Node as well, as upstream's kubelet. */
  private dnsWarning(pod: Pod, w: PodDnsWarning): void {
    this.recorder.event(podRef(pod), 'Warning', w.reason, w.message);
    if (w.nodeMessage) this.recorder.event({ kind: 'Node', name: this.d.node.name, uid: this.d.node.name }, 'Warning', w.reason, w.nodeMessage);
  }

  /** Stops one container with its grace period (upstream's Killing event says why). Idempotent; NotFound counts as stopped. */
  async killContainer(pod: Pod, id: string, name: string, message: string, graceOverride?: number, signal?: AbortSignal): Promise<void> {
    const grace = gracePeriodSeconds(pod, graceOverride);
    this.d.log.info({ pod: podDesc(pod), container: name, containerId: id, graceSeconds: grace }, `killing container: ${message}`);
    this.recorder.event(containerRef(pod, name), 'Normal', 'Killing', message);
    try {
      await this.d.runtime.stopContainer(id, grace, this.call(signal, grace * 1000));
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Stops every running container (in parallel) and every ready sandbox of the pod. */
  async killPod(pod: Pod, rp: RuntimePod, graceOverride?: number, signal?: AbortSignal): Promise<void> {
    const running = rp.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED');
    const results = await Promise.allSettled(running.map((c) => this.killContainer(pod, c.id, c.name, `Stopping container ${c.name}`, graceOverride, signal)));
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
    const pass = new SyncPass(pod, st, signal);
    const rp = await this.fetch(pass.uid, signal);
    pass.mark('fetch');
    const terminalPhase = st.lastStatus?.phase === 'Failed' || st.lastStatus?.phase === 'Succeeded';
    await this.admit(pass, terminalPhase);
    if (st.failure || terminalPhase) return this.windDown(pass, rp);

    const actions = computePodActions(pod, rp, this.d.probes);
    await this.kill(pass, rp, actions);
    const plan = planStarts(actions, rp);
    const volumes = await this.setUpVolumes(pass, rp, actions, plan);
    if (actions.createSandbox && volumes) await this.createSandbox(pass, plan);
    if (plan.sandboxId && volumes && plan.toStart.length > 0) await this.startContainers(pass, rp, plan, plan.sandboxId, volumes);
    if (plan.sandboxId && volumes && plan.ephemeral.length > 0) await this.startEphemeral(pass, rp, plan, plan.sandboxId, volumes);
    return this.finish(pass, rp);
  }

  /** Fails the pod past its activeDeadlineSeconds; gives a live pod its devices once. */
  private async admit(pass: SyncPass, terminalPhase: boolean): Promise<void> {
    const { pod, st, signal } = pass;
    const ads = pod.spec.activeDeadlineSeconds;
    if (!st.failure && ads !== undefined && this.d.clock.now() - st.startTime >= ads * 1000) {
      st.failure = { reason: 'DeadlineExceeded', message: `Pod was active on the node longer than the specified deadline` };
      this.recorder.event(podRef(pod), 'Normal', st.failure.reason, st.failure.message);
      this.d.log.info({ pod: podDesc(pod), activeDeadlineSeconds: ads }, 'pod exceeded its active deadline');
    } else if (!st.failure && ads !== undefined) {
      pass.want(st.startTime + ads * 1000 - this.d.clock.now());
    }
    if (!st.failure && !terminalPhase && !st.admitted && this.d.devices) {
      // Upstream allocates devices in pod admission; a pod that cannot get them fails as a whole.
      try {
        await this.d.devices.admitPod(pod, signal);
        st.admitted = true;
      } catch (e) {
        if (!(e instanceof DeviceAdmissionError)) throw e;
        st.failure = { reason: e.reason, message: e.message };
        // Upstream's rejectPod: a Warning event with the admission failure's reason (UnexpectedAdmissionError).
        this.recorder.event(podRef(pod), 'Warning', e.reason, e.message);
        this.d.log.warn({ pod: podDesc(pod), reason: e.reason, message: e.message }, 'pod cannot get its devices');
      }
    }
  }

  /** A failed pod, or one in a terminal phase, only winds down (upstream: a terminal pod's worker stops syncing it). */
  private async windDown(pass: SyncPass, rp: RuntimePod): Promise<SyncResult> {
    const { pod, st, uid, signal } = pass;
    if (rp.containers.some((c) => c.state === 'CONTAINER_RUNNING') || rp.sandboxes.some((s) => s.state === 'SANDBOX_READY')) {
      await this.killPod(pod, rp, undefined, signal);
      rp = await this.fetch(uid, signal);
    }
    // A terminal pod's devices go back to the pool (upstream: only active pods hold devices).
    await this.d.devices?.releasePod(uid);
    this.d.probes.removePod(uid);
    return { status: this.status(pod, st, rp, true) };
  }

  /** Kills what the actions say must die: the whole pod, or single containers. */
  private async kill(pass: SyncPass, rp: RuntimePod, actions: PodActions): Promise<void> {
    const { pod, signal } = pass;
    if (actions.killPod) {
      const live = rp.containers.some((c) => c.state === 'CONTAINER_RUNNING') || rp.sandboxes.some((s) => s.state === 'SANDBOX_READY');
      if (live) {
        await this.killPod(pod, rp, undefined, signal);
        pass.changed = true;
      }
    } else {
      for (const k of actions.containersToKill) {
        await this.killContainer(pod, k.id, k.name, k.message, k.graceSeconds, signal);
        pass.changed = true;
      }
    }
  }

  /**
   * Sets up the volumes when something is to be created or started (undefined when they are not
   * ready: nothing starts this sync); with nothing to start, refreshes their contents.
   */
  private async setUpVolumes(pass: SyncPass, rp: RuntimePod, actions: PodActions, plan: StartPlan): Promise<Map<string, string> | undefined> {
    const { pod, st, signal } = pass;
    const { toStart, ephemeral } = plan;
    let volumes: Map<string, string> | undefined;
    if (!actions.createSandbox && toStart.length === 0 && ephemeral.length === 0 && actions.sandboxId && (pod.spec.volumes ?? []).length > 0) {
      // Nothing to start: refresh configMap and secret contents for the running containers; a
      // source that went away leaves the last contents in place (upstream does the same).
      await this.d.volumes.setUp(pod, signal).catch((e: Error) => this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'cannot refresh volumes'));
    }
    if (actions.createSandbox || toStart.length > 0 || ephemeral.length > 0) {
      try {
        volumes = await this.d.volumes.setUp(pod, signal);
        pass.mark('volumes');
      } catch (e) {
        if (!(e instanceof VolumeError)) throw e;
        this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'volumes not ready');
        this.recorder.event(podRef(pod), 'Warning', 'FailedMount', e.message);
        // A local-path directory that cannot be made: the claim's events say so as well.
        if (e.claim) this.recorder.event({ kind: 'PersistentVolumeClaim', apiVersion: 'v1', ...e.claim }, 'Warning', 'ProvisioningFailed', e.message);
        const reason = (pod.spec.initContainers ?? []).length > 0 ? Reasons.PodInitializing : Reasons.ContainerCreating;
        for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
          if (!latestByName(rp, c.name)) st.waiting.set(c.name, { reason, message: e.message });
        }
        pass.want(RETRY_MS);
        toStart.length = 0;
        ephemeral.length = 0;
      }
    }
    return volumes;
  }

  /** RunPodSandbox and the new sandbox's IPs; on failure the containers to start wait with the reason. */
  private async createSandbox(pass: SyncPass, plan: StartPlan): Promise<void> {
    const { pod, st, signal } = pass;
    const { attempt } = plan;
    const sandboxConfig = (plan.sandboxConfig = await this.sandboxConfig(pod, attempt, true));
    if (attempt > 0) this.recorder.event(podRef(pod), 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
    try {
      this.d.log.info({ pod: podDesc(pod), attempt }, 'creating pod sandbox');
      pass.mark('sandboxConfig');
      // Upstream's kubelet resolves the RuntimeClass to its handler; the class name itself is not a handler.
      const handler = this.d.runtimeClasses ? await this.d.runtimeClasses.handler(pod.spec.runtimeClassName, signal) : '';
      const sandboxId = (plan.sandboxId = await this.d.runtime.runPodSandbox(sandboxConfig, handler, this.call(signal)));
      pass.mark('runPodSandbox');
      const sst = await this.d.runtime.podSandboxStatus(sandboxId, false, this.call(signal));
      plan.podIPs = [sst.status.ip, ...sst.status.additionalIps].filter((x) => x !== '');
      pass.mark('podSandboxStatus');
      pass.changed = true;
    } catch (e) {
      if (!(e instanceof RuntimeError) && !(e instanceof RuntimeClassError)) throw e;
      this.d.log.warn({ pod: podDesc(pod), error: e.message }, 'failed to create pod sandbox');
      this.recorder.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${e.message}`);
      const reason = (pod.spec.initContainers ?? []).length > 0 ? Reasons.PodInitializing : Reasons.ContainerCreating;
      for (const { c } of plan.toStart) st.waiting.set(c.name, { reason, message: `Failed to create pod sandbox: ${e.message}` });
      plan.sandboxId = undefined;
      pass.want(RETRY_MS);
    }
  }

  /** Starts the next init container, or the containers, in order; one that cannot start waits with its reason. */
  private async startContainers(pass: SyncPass, rp: RuntimePod, plan: StartPlan, sandboxId: string, volumes: Map<string, string>): Promise<void> {
    const { pod, st, signal } = pass;
    const sandboxConfig = (plan.sandboxConfig ??= await this.sandboxConfig(pod, plan.attempt));
    if (pod.spec.hostNetwork) plan.podIPs = this.d.node.hostIPs();
    for (const { c, kind } of plan.toStart) {
      try {
        await this.starter.startContainer(pod, c, kind, sandboxId, sandboxConfig, plan.podIPs, volumes, rp, signal, pass.mark);
        st.waiting.delete(c.name);
        pass.changed = true;
      } catch (e) {
        if (!(e instanceof ContainerSyncError)) throw e;
        st.waiting.set(c.name, { reason: e.reason, message: e.message });
        this.d.log.info({ pod: podDesc(pod), container: c.name, reason: e.reason, message: e.message }, 'container not started');
        pass.want(e.retryAfterMs ?? RETRY_MS);
      }
    }
  }

  /** Starts the ephemeral containers (once each, never restarted). */
  private async startEphemeral(pass: SyncPass, rp: RuntimePod, plan: StartPlan, sandboxId: string, volumes: Map<string, string>): Promise<void> {
    const { pod, st, signal } = pass;
    const sandboxConfig = (plan.sandboxConfig ??= await this.sandboxConfig(pod, plan.attempt));
    const ips = pod.spec.hostNetwork ? this.d.node.hostIPs() : plan.podIPs;
    for (const c of plan.ephemeral) {
      try {
        await this.starter.startContainer(pod, c, 'ephemeral', sandboxId, sandboxConfig, ips, volumes, rp, signal, pass.mark, c.targetContainerName);
        st.waiting.delete(c.name);
        pass.changed = true;
      } catch (e) {
        if (!(e instanceof ContainerSyncError)) throw e;
        st.waiting.set(c.name, { reason: e.reason, message: e.message });
        this.d.log.info({ pod: podDesc(pod), container: c.name, reason: e.reason, message: e.message }, 'ephemeral container not started');
        pass.want(e.retryAfterMs ?? RETRY_MS);
      }
    }
  }

  /** Reads the runtime again if the sync changed it, points the probe workers at the running containers, computes the status. */
  private async finish(pass: SyncPass, rp: RuntimePod): Promise<SyncResult> {
    const { pod, st, uid, signal } = pass;
    if (pass.changed) {
      rp = await this.fetch(uid, signal);
      pass.mark('refetch');
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
    if (pass.changed) {
      pass.mark('status');
      this.d.log.debug({ pod: podDesc(pod), steps: Object.fromEntries(pass.marks) }, 'pod sync steps (ms since the sync began)');
    }
    if (pass.requeue !== undefined) result.requeueMs = pass.requeue;
    return result;
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
    this.starter.forgetPod(uid);
    this.d.images.forgetPod(uid);
    this.d.probes.removePod(uid);
  }
}
