/**
 * Starting one container of a pod, as upstream's kuberuntime startContainer: crash-loop back-off,
 * image, environment, seccomp profile, config (with the container's devices), CreateContainer,
 * StartContainer. A container that cannot start rejects ContainerSyncError with its upstream
 * waiting reason. The starter owns the crash-loop back-off of every container it starts.
 */
import { NOOP_RECORDER } from '../../common/events/recorder';
import { RuntimeError, type ContainerConfig, type PodSandboxConfig } from '../cri';
import { DEVICE_IDS_LABEL, type DeviceRunOptions } from '../devices/container-allocation';
import { SeccompProfileError } from '../seccomp/resolve';
import { applyDeviceAllocation, buildContainerConfig } from './container-config';
import { containerEnv } from './env';
import { FlowBackoff, goDuration } from './flow-backoff';
import { latestByName } from './pod-actions';
import { containerRef } from './pod-events';
import { podDesc, type PodSyncDeps } from './pod-sync-types';
import type { Container, Pod } from '../api/core-v1';
import type { RuntimePod } from './runtime-pod';
import { ContainerSyncError, Reasons } from './sync-errors';

/** Waiting reasons of image errors: upstream's Failed event says "Error: <reason>" for them. */
const IMAGE_REASONS: ReadonlySet<string> = new Set([Reasons.ErrImagePull, Reasons.ImagePullBackOff, Reasons.ErrImageNeverPull, Reasons.InvalidImageName]);

export class ContainerStarter {
  private readonly crashBackoff: FlowBackoff;

  constructor(private readonly d: PodSyncDeps) {
    this.crashBackoff = new FlowBackoff(d.clock);
  }

  private call(signal?: AbortSignal, extraMs = 0) {
    return { timeoutMs: this.d.callTimeoutMs + extraMs, ...(signal ? { signal } : {}) };
  }

  /** Forgets the crash-loop back-offs of a pod's containers (the pod is gone). */
  forgetPod(uid: string): void {
    this.crashBackoff.forgetPrefix(`${uid}/`);
  }

  private backoffKey(pod: Pod, c: Container): string {
    return `${pod.metadata.uid ?? ''}/${c.name}`;
  }

  async startContainer(
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
    const recorder = this.d.recorder ?? NOOP_RECORDER;
    // Attempts continue across sandboxes: runtimes reserve <name>_<pod>_<ns>_<uid>_<attempt>.
    const last = latestByName(rp, c.name);
    if (last && last.state === 'CONTAINER_EXITED') {
      const key = this.backoffKey(pod, c);
      if (this.crashBackoff.isInBackOffSince(key, last.finishedAt)) {
        recorder.event(containerRef(pod, c.name), 'Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${podDesc(pod)}`);
        throw new ContainerSyncError(
          Reasons.CrashLoopBackOff,
          `back-off ${goDuration(this.crashBackoff.get(key))} restarting failed container=${c.name} pod=${podDesc(pod)}`,
          Math.max(100, this.crashBackoff.remaining(key, last.finishedAt)),
        );
      }
      this.crashBackoff.next(key, last.finishedAt);
    }
    try {
      const imageRef = await this.d.images.ensureImage(pod, c, sandboxConfig, signal);
      mark(`${c.name}:image`);
      const attempt = last ? last.attempt + 1 : 0;
      const config = await this.containerConfig(pod, c, kind, { attempt, podIPs, volumes, rp, signal, targetName });
      config.image = { image: imageRef, userSpecifiedImage: c.image ?? '' };
      mark(`${c.name}:config`);
      await this.createAndStart(pod, c, sandboxId, sandboxConfig, config, attempt, signal, mark);
    } catch (e) {
      // Upstream's "Error: <err>": the waiting reason for image errors (ErrImagePull, ImagePullBackOff, ...), else the message.
      if (e instanceof ContainerSyncError) recorder.event(containerRef(pod, c.name), 'Warning', 'Failed', `Error: ${IMAGE_REASONS.has(e.reason) ? e.reason : e.message}`);
      throw e;
    }
  }

  /** Environment, seccomp profile, devices and target namespace into the container's CRI config. */
  private async containerConfig(
    pod: Pod,
    c: Container,
    kind: 'init' | 'container' | 'ephemeral',
    o: { attempt: number; podIPs: string[]; volumes: Map<string, string>; rp: RuntimePod; signal?: AbortSignal; targetName?: string },
  ): Promise<ContainerConfig> {
    const uid = pod.metadata.uid ?? '';
    const env = await containerEnv(pod, c, {
      objects: this.d.objects,
      podIPs: o.podIPs,
      hostIPs: this.d.node.hostIPs(),
      nodeCpuMilli: this.d.node.cpuMilli,
      nodeMemoryBytes: this.d.node.memoryBytes,
      ...(o.signal ? { signal: o.signal } : {}),
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
    const terminationLogPath = await this.d.volumes.terminationLog(uid, c.name, o.attempt);
    const config = buildContainerConfig({ pod, container: c, kind, attempt: o.attempt, env, volumes: o.volumes, seccomp, terminationLogPath, memoryCapacity: this.d.node.memoryBytes });
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
    if (o.targetName) {
      // Upstream: an ephemeral container with a target shares the target's process namespace (pid TARGET).
      const target = o.rp.containers.find((r) => r.name === o.targetName && r.kind !== 'ephemeral' && r.state === 'CONTAINER_RUNNING');
      if (!target) throw new ContainerSyncError(Reasons.CreateContainerError, `target container "${o.targetName}" is not running`);
      const linux = (config.linux ??= {});
      const sc = (linux.securityContext ??= {});
      sc.namespaceOptions = { ...(sc.namespaceOptions ?? {}), pid: 'TARGET', targetId: target.id };
    }
    return config;
  }

  /** CreateContainer then StartContainer, with upstream's Created and Started events. */
  private async createAndStart(
    pod: Pod,
    c: Container,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    config: ContainerConfig,
    attempt: number,
    signal: AbortSignal | undefined,
    mark: (step: string) => void,
  ): Promise<void> {
    const recorder = this.d.recorder ?? NOOP_RECORDER;
    let id: string;
    try {
      id = await this.d.runtime.createContainer(sandboxId, config, sandboxConfig, this.call(signal));
      mark(`${c.name}:createContainer`);
    } catch (e) {
      if (e instanceof RuntimeError) throw new ContainerSyncError(Reasons.CreateContainerError, e.message);
      throw e;
    }
    recorder.event(containerRef(pod, c.name), 'Normal', 'Created', `Created container: ${c.name}`);
    try {
      await this.d.runtime.startContainer(id, this.call(signal));
      mark(`${c.name}:startContainer`);
    } catch (e) {
      if (e instanceof RuntimeError) throw new ContainerSyncError(Reasons.RunContainerError, e.message);
      throw e;
    }
    recorder.event(containerRef(pod, c.name), 'Normal', 'Started', `Started container ${c.name}`);
    this.d.log.info({ pod: podDesc(pod), container: c.name, containerId: id, attempt }, 'started container');
  }
}
