/**
 * The simulator's container lifecycle RPCs (CreateContainer, StartContainer, StopContainer,
 * RemoveContainer, ListContainers, ContainerStatus, UpdateContainerResources) with containerd
 * 1.6's state rules: stopping a CREATED or EXITED container is a no-op, removes are idempotent,
 * a start fails when the log file cannot be created. The records are SimState's; the Simulator
 * delegates these RPCs here.
 */
import path from 'node:path';
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions } from './runtime-service';
import { behaviourFor, withPodExit, withPodUsage } from './sim-behaviour';
import type { SimImageStore } from './sim-images';
import type { SimulatorOptions } from './sim-options';
import type { SimProcesses } from './sim-processes';
import { containerListItem, containerStatusOf, labelMatcher, type ContainerRec } from './sim-records';
import { KILLED, type SimState } from './sim-state';
import type { Container, ContainerConfig, ContainerFilter, ContainerStatusResult, LinuxContainerResources, PodSandboxConfig } from './types';

export class SimContainers {
  constructor(
    private readonly state: SimState,
    private readonly clock: Clock,
    private readonly images: SimImageStore,
    private readonly processes: SimProcesses,
    private readonly opts: SimulatorOptions,
    /** The Simulator's RPC entry: the gate, then catching up with the clock. */
    private readonly begin: (rpc: string, opts?: CallOptions) => Promise<void>,
  ) {}

  async createContainer(podSandboxId: string, config: ContainerConfig, _sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    await this.begin('CreateContainer', opts);
    const s = this.state.mustSandbox(podSandboxId, 'CreateContainer');
    if (s.state !== 'SANDBOX_READY') {
      throw new RuntimeError('FailedPrecondition', `sandbox container "${s.id}" is not running`, 'CreateContainer');
    }
    const name = config.metadata?.name;
    if (!name) throw new RuntimeError('InvalidArgument', 'container config must include metadata with a name', 'CreateContainer');
    const image = this.images.resolve(config.image?.image ?? '');
    if (!image) throw new RuntimeError('NotFound', `failed to resolve image "${config.image?.image ?? ''}": not found`, 'CreateContainer');
    const behaviour = withPodUsage(
      withPodExit(behaviourFor(this.opts.behaviours ?? [], config, s.config.metadata, image), s.config.annotations),
      s.config.annotations,
      name,
    );
    if (behaviour.createError !== undefined) throw new RuntimeError('Unknown', behaviour.createError, 'CreateContainer');
    const id = this.state.newId('container');
    const sm = s.config.metadata;
    const reservedName = `${name}_${sm.name}_${sm.namespace}_${sm.uid}_${config.metadata.attempt}`;
    this.state.reserve(reservedName, id, 'container', 'CreateContainer');
    const rec: ContainerRec = {
      id,
      sandboxId: s.id,
      config: structuredClone(config),
      image,
      behaviour,
      state: 'CONTAINER_CREATED',
      createdAt: this.clock.now(),
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      reason: '',
      message: '',
      reservedName,
      logPath: s.config.logDirectory && config.logPath ? path.join(s.config.logDirectory, config.logPath) : '',
    };
    if (config.linux?.resources) rec.resources = { ...config.linux.resources };
    this.state.containers.set(id, rec);
    this.state.emit(id, s, 'CONTAINER_CREATED_EVENT');
    return id;
  }

  async startContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('StartContainer', opts);
    const c = this.state.mustContainer(containerId, 'StartContainer');
    if (c.state !== 'CONTAINER_CREATED') throw new RuntimeError('FailedPrecondition', `container is in ${c.state} state`, 'StartContainer');
    const s = this.state.sandboxes.get(c.sandboxId);
    if (!s || s.state !== 'SANDBOX_READY') {
      throw new RuntimeError('FailedPrecondition', `sandbox container "${c.sandboxId}" is not running`, 'StartContainer');
    }
    const b = c.behaviour;
    if (b.startError !== undefined) this.state.failStart(c, s, b.startError);
    if (this.opts.writeLogs !== false && c.logPath) {
      // containerd creates the log file before starting the task; failing that fails the start.
      try {
        await this.processes.writeLog(c);
      } catch (e) {
        this.state.failStart(c, s, `failed to create container log ${c.logPath}: ${(e as Error).message}`);
      }
      if (this.state.containers.get(c.id) !== c || c.state !== 'CONTAINER_CREATED') {
        throw new RuntimeError('FailedPrecondition', `container is in ${c.state} state`, 'StartContainer');
      }
    }
    const now = this.clock.now();
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = now;
    if (b.exitAfterMs !== undefined) {
      c.exitAt = now + Math.max(0, b.exitAfterMs);
      this.state.wakeAt(c.exitAt);
    }
    this.state.emit(c.id, s, 'CONTAINER_STARTED_EVENT');
    this.state.settle();
  }

  async stopContainer(containerId: string, timeoutSeconds: number, opts?: CallOptions): Promise<void> {
    await this.begin('StopContainer', opts);
    const c = this.state.mustContainer(containerId, 'StopContainer');
    if (c.state !== 'CONTAINER_RUNNING') return;
    const graceMs = Math.max(0, timeoutSeconds) * 1000;
    if (graceMs === 0) {
      this.state.exit(c, this.clock.now(), KILLED);
      return;
    }
    const delay = c.behaviour.stopDelayMs ?? 0;
    const waitMs = Math.min(delay, graceMs);
    const exitAt = this.clock.now() + waitMs;
    if (waitMs > 0) {
      await this.clock.sleep(waitMs, opts?.signal);
      this.state.settle();
      if (c.state !== 'CONTAINER_RUNNING') return;
    }
    this.state.exit(c, Math.min(exitAt, this.clock.now()), delay >= graceMs ? KILLED : (c.behaviour.stopExitCode ?? 143));
  }

  async removeContainer(containerId: string, opts?: CallOptions): Promise<void> {
    await this.begin('RemoveContainer', opts);
    const c = this.state.containers.get(containerId);
    if (c) this.state.removeContainer(c);
  }

  async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    await this.begin('ListContainers', opts);
    const out: Container[] = [];
    const matches = labelMatcher(filter?.labelSelector);
    for (const c of this.state.containers.values()) {
      if (filter?.id && !c.id.startsWith(filter.id)) continue;
      if (filter?.state && c.state !== filter.state) continue;
      if (filter?.podSandboxId && !c.sandboxId.startsWith(filter.podSandboxId)) continue;
      if (!matches(c.config.labels)) continue;
      out.push(containerListItem(c));
    }
    return out;
  }

  /**
   * Verbose adds info["info"], a JSON document holding the ContainerConfig the container was
   * created with (as containerd's verbose status holds its "config"; ours is the agent's camelCase
   * shape, not protobuf JSON), so tests can observe what CreateContainer was given.
   */
  async containerStatus(containerId: string, verbose = false, opts?: CallOptions): Promise<ContainerStatusResult> {
    await this.begin('ContainerStatus', opts);
    const c = this.state.mustContainer(containerId, 'ContainerStatus');
    return { status: containerStatusOf(c), info: verbose ? { info: JSON.stringify({ sandboxID: c.sandboxId, config: c.config }) } : {} };
  }

  async updateContainerResources(containerId: string, resources: LinuxContainerResources, opts?: CallOptions): Promise<void> {
    await this.begin('UpdateContainerResources', opts);
    const c = this.state.mustContainer(containerId, 'UpdateContainerResources');
    if (c.state === 'CONTAINER_EXITED') {
      throw new RuntimeError('FailedPrecondition', `container "${c.id}" is in exited state`, 'UpdateContainerResources');
    }
    c.resources = { ...(c.resources ?? {}), ...resources };
  }
}
