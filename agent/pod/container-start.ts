/**
 * Starting one container of a pod, as upstream's kuberuntime startContainer: crash-loop back-off,
 * image, environment, seccomp profile, config (with the container's devices), CreateContainer,
 * StartContainer. A container that cannot start rejects ContainerSyncError with its upstream
 * waiting reason. The starter owns the crash-loop back-off of every container it starts.
 */
import { RuntimeError, type PodSandboxConfig } from '../cri';
import { DEVICE_IDS_LABEL, type DeviceRunOptions } from '../devices/container-allocation';
import { SeccompProfileError } from '../seccomp/resolve';
import { applyDeviceAllocation, buildContainerConfig } from './container-config';
import { containerEnv } from './env';
import { FlowBackoff, goDuration } from './flow-backoff';
import { latestByName } from './pod-actions';
import { podDesc, type PodSyncDeps } from './pod-sync-types';
import type { Container, Pod } from '../api/core-v1';
import type { RuntimePod } from './runtime-pod';
import { ContainerSyncError, Reasons } from './sync-errors';

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
}
