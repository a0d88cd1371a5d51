/**
 * The simulator's runtime state and its transitions: records, name reservations (containerd's
 * "name is reserved for" rule), self-exits driven by the clock, kills, removals, and the events
 * each transition publishes (with the pod's sandbox and container statuses, as containerd 1.7+
 * sends them). The RPC surface is in ./simulator.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import { EventFanout } from './event-fanout';
import type { IpPool } from './sim-ip-pool';
import { containerStatusOf, sandboxStatusOf, type ContainerRec, type SandboxRec } from './sim-records';
import type { ContainerEvent, ContainerEventType, ContainerStatus } from './types';

/** Exit code of a SIGKILLed process. */
export const KILLED = 137;

export class SimState {
  readonly sandboxes = new Map<string, SandboxRec>();
  readonly containers = new Map<string, ContainerRec>();
  readonly events = new EventFanout<ContainerEvent>();
  /** Aborted by close(): ends wake-up timers and event streams. */
  readonly lifetime = new AbortController();
  private readonly reserved = new Map<string, string>(); // reserved name -> ID
  private seq = 0;

  constructor(
    readonly clock: Clock,
    private readonly name: string,
    /** Pod IPs; released when a sandbox stops. */
    readonly ips: IpPool,
  ) {}

  /** A 64-hex ID, a hash of the simulator's name and a counter (deterministic). */
  newId(kind: string): string {
    return createHash('sha256').update(`${this.name}/${kind}/${++this.seq}`).digest('hex');
  }

  /** Claims a name for `id`; rejects AlreadyExists naming the holder, as containerd. */
  reserve(name: string, id: string, kind: 'sandbox' | 'container', rpc: string): void {
    const holder = this.reserved.get(name);
    if (holder !== undefined) {
      throw new RuntimeError('AlreadyExists', `failed to reserve ${kind} name "${name}": name "${name}" is reserved for "${holder}"`, rpc);
    }
    this.reserved.set(name, id);
  }

  /** Frees a reserved name (a creation that failed after reserving). */
  release(name: string): void {
    this.reserved.delete(name);
  }

  mustSandbox(id: string, rpc: string): SandboxRec {
    const s = this.sandboxes.get(id);
    if (!s) throw new RuntimeError('NotFound', `an error occurred when try to find sandbox "${id}": not found`, rpc);
    return s;
  }

  mustContainer(id: string, rpc: string): ContainerRec {
    const c = this.containers.get(id);
    if (!c) throw new RuntimeError('NotFound', `an error occurred when try to find container "${id}": not found`, rpc);
    return c;
  }

  /** Applies every self-exit due by now (behaviour.exitAfterMs), dated at its due time. */
  settle(): void {
    const now = this.clock.now();
    for (const c of this.containers.values()) {
      if (c.state === 'CONTAINER_RUNNING' && c.exitAt !== undefined && c.exitAt <= now) {
        this.exit(c, c.exitAt, c.behaviour.exitCode ?? 0, c.behaviour.exitReason);
      }
    }
  }

  /** Schedules a settle at clock time `at`, so exits (and their events) happen without anyone calling in. */
  wakeAt(at: number): void {
    void this.clock.sleep(Math.max(0, at - this.clock.now()), this.lifetime.signal).then((ok) => {
      if (ok) this.settle();
    });
  }

  /** Marks a container EXITED at `at` with the code; reason Completed/Error unless given (as containerd). */
  exit(c: ContainerRec, at: number, exitCode: number, reason?: string): void {
    c.state = 'CONTAINER_EXITED';
    c.finishedAt = at;
    c.exitCode = exitCode;
    c.reason = reason ?? (exitCode === 0 ? 'Completed' : 'Error');
    delete c.exitAt;
    const s = this.sandboxes.get(c.sandboxId);
    if (s) this.emit(c.id, s, 'CONTAINER_STOPPED_EVENT');
  }

  /** A start that failed: EXITED with 128 and the error as message (runc's way); always throws. */
  failStart(c: ContainerRec, s: SandboxRec, error: string): never {
    c.state = 'CONTAINER_EXITED';
    c.startedAt = 0;
    c.finishedAt = this.clock.now();
    c.exitCode = 128;
    c.reason = 'StartError';
    c.message = error;
    this.emit(c.id, s, 'CONTAINER_STOPPED_EVENT');
    throw new RuntimeError('Unknown', `failed to start containerd task "${c.id}": ${error}: unknown`, 'StartContainer');
  }

  /** Kills the sandbox's running containers (137, as containerd's StopPodSandbox) and releases its IP. Idempotent. */
  stopSandbox(s: SandboxRec): void {
    this.settle();
    for (const c of this.containers.values()) {
      if (c.sandboxId === s.id && c.state === 'CONTAINER_RUNNING') this.exit(c, this.clock.now(), KILLED);
    }
    if (s.state === 'SANDBOX_READY') {
      s.state = 'SANDBOX_NOTREADY';
      if (s.ip !== '') this.ips.release(s.ip);
      this.emit(s.id, s, 'CONTAINER_STOPPED_EVENT');
    }
  }

  /** Stops, then forgets the sandbox and its containers. */
  removeSandbox(s: SandboxRec): void {
    this.stopSandbox(s);
    for (const c of [...this.containers.values()]) if (c.sandboxId === s.id) this.removeContainer(c);
    this.sandboxes.delete(s.id);
    this.reserved.delete(s.reservedName);
    this.emit(s.id, s, 'CONTAINER_DELETED_EVENT');
  }

  /** Kills (if running) and forgets the container. */
  removeContainer(c: ContainerRec): void {
    if (c.state === 'CONTAINER_RUNNING') this.exit(c, this.clock.now(), KILLED);
    this.containers.delete(c.id);
    this.reserved.delete(c.reservedName);
    const s = this.sandboxes.get(c.sandboxId);
    if (s) this.emit(c.id, s, 'CONTAINER_DELETED_EVENT');
  }

  /** Publishes an event about `id` with the pod's current statuses (skipped when nobody listens). */
  emit(id: string, s: SandboxRec, type: ContainerEventType): void {
    if (this.events.size === 0) return;
    const containersStatuses: ContainerStatus[] = [];
    for (const c of this.containers.values()) if (c.sandboxId === s.id) containersStatuses.push(containerStatusOf(c));
    this.events.publish({ containerId: id, type, createdAt: this.clock.now(), podSandboxStatus: sandboxStatusOf(s), containersStatuses });
  }
}
